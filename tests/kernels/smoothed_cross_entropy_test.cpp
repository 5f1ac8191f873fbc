// SPDX-License-Identifier: MIT
#include "libtorch/kernels/smoothed_cross_entropy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

// Every output of the row kernel against the same quantities in float64 with LibTorch's ops.
void expect_rows_agree(const torch::Tensor& logits, const torch::Tensor& target, double epsilon) {
  const int64_t rows = logits.size(0), v = logits.size(1);
  const double other = epsilon / static_cast<double>(v - 1), on_target = 1.0 - epsilon - other;
  torch::Tensor loss = torch::empty({rows}, torch::kDouble),
                nll = torch::empty({rows}, torch::kDouble);
  torch::Tensor grad = torch::empty_like(logits), grad_bias = torch::ones({v});
  smoothed_cross_entropy_rows(logits, target, on_target, other, loss, nll, grad, grad_bias);

  torch::Tensor log_p = logits.to(torch::kDouble).log_softmax(1);
  torch::Tensor ref_nll = -log_p.gather(1, target.unsqueeze(1)).squeeze(1);
  torch::Tensor ref_loss = on_target * ref_nll - other * log_p.sum(1);
  torch::Tensor q =
      torch::full({rows, v}, other, torch::kDouble)
          .scatter_add_(1, target.unsqueeze(1), torch::full({rows, 1}, on_target, torch::kDouble));
  torch::Tensor ref_grad = log_p.exp() - q;
  EXPECT_TRUE(torch::allclose(nll, ref_nll, 1e-6, 1e-5)) << (nll - ref_nll).abs().max();
  EXPECT_TRUE(torch::allclose(loss, ref_loss, 1e-6, 1e-4)) << (loss - ref_loss).abs().max();
  EXPECT_TRUE(torch::allclose(grad.to(torch::kDouble), ref_grad, 1e-5, 1e-7))
      << (grad - ref_grad).abs().max();
  EXPECT_TRUE(torch::allclose(grad_bias.to(torch::kDouble), 1 + ref_grad.sum(0), 1e-5, 1e-5));

  // Without a gradient: the same loss, nothing else written; in place: the same gradient.
  torch::Tensor loss2 = torch::empty_like(loss), nll2 = torch::empty_like(nll);
  smoothed_cross_entropy_rows(logits, target, on_target, other, loss2, nll2, {}, {});
  EXPECT_TRUE(loss2.equal(loss));
  EXPECT_TRUE(nll2.equal(nll));
  torch::Tensor in_place = logits.clone();
  smoothed_cross_entropy_rows(in_place, target, on_target, other, loss2, nll2, in_place, {});
  EXPECT_TRUE(in_place.equal(grad));
}

TEST(SmoothedCrossEntropyRows, AgreesWithFloat64LogSoftmax) {
  torch::manual_seed(8);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (double epsilon : {0.0, 0.1}) {
      // odd sizes, spreads from near-uniform to confident
      for (double spread : {0.1, 5.0, 40.0}) {
        torch::Tensor logits = torch::randn({37, 1001}) * spread;
        expect_rows_agree(logits, torch::randint(0, 1001, {37}), epsilon);
      }
    }
  }
}

TEST(SmoothedCrossEntropyRows, UnderflowingProbabilitiesKeepAnExactLogLikelihood) {
  // The target 200 below the row's maximum: p_target is 0 in float, its nll must still be ~200.
  torch::Tensor logits = torch::zeros({3, 17});
  logits.select(1, 5).fill_(200.0f);
  torch::Tensor target = torch::tensor({0, 5, 16}, torch::kLong);
  torch::Tensor loss = torch::empty({3}, torch::kDouble), nll = torch::empty({3}, torch::kDouble);
  smoothed_cross_entropy_rows(logits, target, 1.0, 0.0, loss, nll, {}, {});
  EXPECT_NEAR(nll[0].item<double>(), 200.0, 1e-4);
  EXPECT_NEAR(nll[1].item<double>(), 0.0, 1e-6);
  expect_rows_agree(logits, target, 0.1);
}

TEST(SmoothedCrossEntropyRows, RefusesTargetsOutsideTheVocabularyAndBadLayouts) {
  torch::Tensor loss = torch::empty({2}, torch::kDouble), nll = torch::empty({2}, torch::kDouble);
  EXPECT_THROW(
      smoothed_cross_entropy_rows(torch::randn({2, 5}), torch::tensor({1, 5}, torch::kLong), 1.0,
                                  0.0, loss, nll, {}, {}),
      c10::Error);
  EXPECT_THROW(
      smoothed_cross_entropy_rows(torch::randn({5, 2}).t(), torch::tensor({1, 0}, torch::kLong),
                                  1.0, 0.0, loss, nll, {}, {}),
      c10::Error);
}

}  // namespace
}  // namespace nmtzoo
