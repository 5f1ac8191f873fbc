// SPDX-License-Identifier: MIT
#include "libtorch/models/functional.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace nmtzoo {
namespace {

TEST(Dropout, DropsTheRequestedFractionAndRescales) {
  torch::manual_seed(1);
  auto x = torch::ones({1000, 1000});
  auto y = apply_dropout(x, 0.3, true);
  double dropped = y.eq(0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(dropped, 0.3, 0.003);
  EXPECT_NEAR(y.masked_select(y.ne(0)).mean().item<double>(), 1 / 0.7, 1e-5);
  EXPECT_TRUE(apply_dropout(x, 0.3, false).is_same(x));
}

TEST(WordDropout, ZeroesWholeTokenVectorsAndRescalesTheOthers) {
  torch::manual_seed(2);
  auto x = torch::ones({40, 50, 8});  // (B, T, m)
  auto y = apply_word_dropout(x, 0.25, true);
  auto zero_entries = y.eq(0).sum(-1);  // per token: 0 or all 8, never a part of the vector
  EXPECT_TRUE(zero_entries.eq(0).logical_or(zero_entries.eq(8)).all().item<bool>());
  double dropped = zero_entries.eq(8).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(dropped, 0.25, 0.03);  // 2,000 tokens: 3 standard deviations
  EXPECT_NEAR(y.masked_select(y.ne(0)).mean().item<double>(), 1 / 0.75, 1e-5);
  EXPECT_TRUE(apply_word_dropout(x, 0.25, false).is_same(x)) << "the identity outside training";
  EXPECT_TRUE(apply_word_dropout(x, 0.0, true).is_same(x));
}

TEST(Dropout, IsReproducibleFromTheSeedWhateverTheThreads) {
  auto x = torch::randn({300, 77});
  const int threads = torch::get_num_threads();  // restored: later tests' numerics depend on it
  torch::manual_seed(7);
  torch::set_num_threads(1);
  auto a = apply_dropout(x, 0.1, true);
  torch::manual_seed(7);
  torch::set_num_threads(2);
  auto b = apply_dropout(x, 0.1, true);
  EXPECT_TRUE(a.equal(b));
  EXPECT_FALSE(apply_dropout(x, 0.1, true).equal(a)) << "the next call draws a new mask";
  torch::set_num_threads(threads);
}

TEST(Dropout, GradientFlowsThroughKeptElementsOnly) {
  torch::manual_seed(3);
  auto x = torch::randn({64, 32}, torch::requires_grad());
  auto y = apply_dropout(x, 0.5, true);
  y.sum().backward();
  auto kept = y.detach().ne(0);
  EXPECT_TRUE(x.grad().masked_select(kept).eq(2.0f).all().item<bool>());
  EXPECT_TRUE(x.grad().masked_select(kept.logical_not()).eq(0.0f).all().item<bool>());
}

}  // namespace
}  // namespace nmtzoo
