// SPDX-License-Identifier: MIT
#include "libtorch/train/gradient_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "libtorch/kernels/fused_adam.h"

namespace nmtzoo {
namespace {

// What the training step does with an optimizer that does not scale in its step.
double scale_and_clip(const std::vector<torch::Tensor>& parameters, double scale, double max_norm) {
  const GradientScaling scaling = gradient_scaling(parameters, scale, max_norm);
  if (std::isfinite(scaling.norm)) scale_gradients(parameters, scaling.factor);
  return scaling.norm;
}

std::vector<torch::Tensor> parameters_with_gradients(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> parameters;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{7, 5}, {5}, {3, 2, 4}}) {
    auto p = torch::randn(shape).requires_grad_();
    p.mutable_grad() = 40 * torch::randn(shape);
    parameters.push_back(p);
  }
  parameters.push_back(torch::randn({4}).requires_grad_());  // no gradient: left out
  return parameters;
}

// LibTorch's way: scale each gradient, then clip_grad_norm_ (infinite max_norm = no clipping).
std::vector<torch::Tensor> reference(double scale, double max_norm, double* norm) {
  auto parameters = parameters_with_gradients(3);
  for (auto& p : parameters) {
    if (p.grad().defined()) p.grad().mul_(scale);
  }
  *norm = torch::nn::utils::clip_grad_norm_(
      parameters, max_norm > 0 ? max_norm : std::numeric_limits<double>::infinity());
  return parameters;
}

// Clipping off, a max_norm above the norm, and one below it (the gradients shrink to it).
TEST(GradientScaling, EqualsScalingThenLibTorchsClipGradNorm) {
  for (const double max_norm : {0.0, 1e6, 0.5}) {
    SCOPED_TRACE(max_norm);
    const double scale = 1.0 / 37;
    double expected_norm = 0;
    const auto expected = reference(scale, max_norm, &expected_norm);
    auto parameters = parameters_with_gradients(3);
    const double norm = scale_and_clip(parameters, scale, max_norm);
    EXPECT_NEAR(norm, expected_norm, 1e-6 * expected_norm);
    EXPECT_GT(norm, 0.5) << "the case below the norm clips";
    for (size_t i = 0; i < parameters.size(); ++i) {
      ASSERT_EQ(parameters[i].grad().defined(), expected[i].grad().defined()) << "parameter " << i;
      if (parameters[i].grad().defined()) {
        EXPECT_TRUE(torch::allclose(parameters[i].grad(), expected[i].grad(), 1e-6, 1e-7))
            << "parameter " << i;
      }
    }
    if (max_norm == 0.5) {
      std::vector<torch::Tensor> grads;
      for (const auto& p : parameters) {
        if (p.grad().defined()) grads.push_back(p.grad().flatten());
      }
      EXPECT_NEAR(torch::cat(grads).norm().item<double>(), 0.5, 1e-5);
    }
  }
}

// A non-finite gradient: its norm comes back (the update is then skipped), nothing multiplied.
TEST(GradientScaling, ANonFiniteGradientIsReportedAndLeftAlone) {
  auto parameters = parameters_with_gradients(4);
  parameters[1].mutable_grad()[2] = std::numeric_limits<float>::quiet_NaN();
  const torch::Tensor before = parameters[0].grad().clone();
  EXPECT_FALSE(std::isfinite(scale_and_clip(parameters, 0.5, 1.0)));
  EXPECT_TRUE(torch::equal(parameters[0].grad(), before));
  EXPECT_EQ(scale_and_clip({torch::randn({2}).requires_grad_()}, 0.5, 1.0), 0.0) << "no gradient";
}

}  // namespace
}  // namespace nmtzoo
