// SPDX-License-Identifier: MIT
#include "libtorch/kernels/dropout_layer_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <tuple>

#include "libtorch/kernels/dropout.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

struct Operands {
  torch::Tensor residual, sublayer, weight, bias;
};

Operands operands(std::vector<int64_t> shape, at::ScalarType sublayer_dtype = at::kFloat) {
  const int64_t d = shape.back();
  return {torch::randn(shape), torch::randn(shape).to(sublayer_dtype), torch::randn({d}),
          torch::randn({d})};
}

// The fused output and every gradient, or with `unfused` those of
// layer_norm(residual + chunked_dropout(sublayer)), for one upstream gradient; both from seed 42.
std::tuple<torch::Tensor, std::vector<torch::Tensor>> run(const Operands& in, double p,
                                                          const torch::Tensor& upstream,
                                                          bool unfused = false) {
  std::vector<torch::Tensor> leaves{
      in.residual.detach().requires_grad_(), in.sublayer.detach().requires_grad_(),
      in.weight.detach().requires_grad_(), in.bias.detach().requires_grad_()};
  torch::manual_seed(42);
  torch::Tensor out;
  if (unfused) {
    torch::Tensor dropped = p > 0 ? chunked_dropout(leaves[1], p) : leaves[1].to(at::kFloat);
    out = torch::layer_norm(leaves[0] + dropped, {in.weight.size(0)}, leaves[2], leaves[3], 1e-5);
  } else {
    out = dropout_add_layer_norm(leaves[0], leaves[1], p, leaves[2], leaves[3], 1e-5);
  }
  (out * upstream).sum().backward();
  std::vector<torch::Tensor> grads;
  for (auto& leaf : leaves) grads.push_back(leaf.grad());
  return {out.detach(), grads};
}

// The multipliers the fused kernel drew for this shape: with residual 0 and sublayer 1, the
// normalised row is above its mean exactly where an element was kept (in rows that drop some).
torch::Tensor drawn_multipliers(std::vector<int64_t> shape, double p) {
  const int64_t d = shape.back();
  torch::manual_seed(42);
  torch::NoGradGuard no_grad;
  torch::Tensor out = dropout_add_layer_norm(torch::zeros(shape), torch::ones(shape), p,
                                             torch::ones({d}), torch::zeros({d}), 1e-5);
  return (out > 0).to(at::kFloat) * static_cast<float>(1.0 / (1.0 - p));
}

void expect_close(const torch::Tensor& a, const torch::Tensor& b, double tolerance,
                  const char* what) {
  EXPECT_TRUE(torch::allclose(a, b, tolerance, tolerance)) << what << ": " << (a - b).abs().max();
}

TEST(DropoutAddLayerNorm, WithoutDropoutEqualsLayerNormOfTheSum) {
  torch::manual_seed(1);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 7, 256},
                                       std::vector<int64_t>{37, 13}, std::vector<int64_t>{1, 1}}) {
      Operands in = operands(shape);
      torch::Tensor upstream = torch::randn(shape);
      auto [out, grads] = run(in, 0.0, upstream);
      auto [ref, ref_grads] = run(in, 0.0, upstream, /*unfused=*/true);
      expect_close(out, ref, 1e-5, "output");
      const char* names[] = {"residual", "sublayer", "weight", "bias"};
      for (size_t i = 0; i < 4; ++i) expect_close(grads[i], ref_grads[i], 1e-4, names[i]);
    }
  }
}

// The masks are chunked_dropout's for the same seed, also for rows that start mid-stream
// (odd row sizes) and across the 4,096-element streams.
TEST(DropoutAddLayerNorm, DropsWhatChunkedDropoutDropsAndMatchesTheUnfusedPath) {
  torch::manual_seed(2);
  const double p = 0.3;
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 9, 256}, std::vector<int64_t>{5, 33},
                                       std::vector<int64_t>{300, 7}}) {
      Operands in = operands(shape);
      torch::Tensor upstream = torch::randn(shape);
      auto [out, grads] = run(in, p, upstream);
      auto [ref, ref_grads] = run(in, p, upstream, /*unfused=*/true);
      expect_close(out, ref, 1e-5, "output");
      const char* names[] = {"residual", "sublayer", "weight", "bias"};
      for (size_t i = 0; i < 4; ++i) expect_close(grads[i], ref_grads[i], 1e-4, names[i]);
      if (shape.back() < 256) continue;  // a short row may keep everything: no mask to read off
      torch::manual_seed(42);
      torch::Tensor chunked = chunked_dropout(torch::ones(shape), p);
      EXPECT_TRUE(drawn_multipliers(shape, p).equal(chunked))
          << "masks of " << at::IntArrayRef(shape);
    }
  }
}

TEST(DropoutAddLayerNorm, MasksKeepOneMinusPAndDoNotDependOnTheThreadCount) {
  const std::vector<int64_t> shape{64, 30, 256};
  torch::Tensor one, two;
  {
    testing::ThreadCount thread_count(1);
    one = drawn_multipliers(shape, 0.3);
  }
  {
    testing::ThreadCount thread_count(2);
    two = drawn_multipliers(shape, 0.3);
  }
  EXPECT_TRUE(one.equal(two));
  const double kept = (one > 0).to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.7, 0.005);  // 491,520 draws: 5 standard deviations is 0.0033
  // Rows draw distinct masks, and a new call draws a new mask.
  EXPECT_FALSE(one[0][0].equal(one[0][1]));
  torch::manual_seed(43);
  torch::NoGradGuard no_grad;
  torch::Tensor other = dropout_add_layer_norm(torch::zeros(shape), torch::ones(shape), 0.3,
                                               torch::ones({256}), torch::zeros({256}), 1e-5);
  EXPECT_FALSE(((other > 0).to(at::kFloat) * (1.0 / 0.7)).equal(one));
}

TEST(DropoutAddLayerNorm, Bf16SublayerAndNonContiguousResidual) {
  torch::manual_seed(3);
  Operands in = operands({6, 5, 32}, at::kBFloat16);
  in.residual = torch::randn({5, 6, 32}).transpose(0, 1);
  ASSERT_TRUE(dropout_add_layer_norm_applies(in.residual, in.sublayer, in.weight, in.bias));
  torch::Tensor upstream = torch::randn({6, 5, 32});
  auto [out, grads] = run(in, 0.0, upstream);
  auto [ref, ref_grads] = run(in, 0.0, upstream, /*unfused=*/true);
  expect_close(out, ref, 1e-5, "output");
  EXPECT_EQ(grads[1].scalar_type(), at::kBFloat16);
  expect_close(grads[1].to(at::kFloat), ref_grads[1].to(at::kFloat), 2e-2, "bf16 sublayer");
  expect_close(grads[0], ref_grads[0], 1e-4, "residual");
}

TEST(DropoutAddLayerNorm, RefusesWhatItDoesNotTake) {
  auto x = torch::randn({2, 8});
  EXPECT_FALSE(
      dropout_add_layer_norm_applies(x.to(at::kDouble), x, torch::ones({8}), torch::zeros({8})));
  EXPECT_FALSE(dropout_add_layer_norm_applies(x, torch::randn({2, 1, 8}), torch::ones({8}),
                                              torch::zeros({8})));
  EXPECT_FALSE(dropout_add_layer_norm_applies(x, x, torch::ones({4}), torch::zeros({4})));
  EXPECT_FALSE(dropout_add_layer_norm_applies(x, x, torch::Tensor(), torch::Tensor()));
  EXPECT_THROW(dropout_add_layer_norm(x, x, 1.0, torch::ones({8}), torch::zeros({8}), 1e-5),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
