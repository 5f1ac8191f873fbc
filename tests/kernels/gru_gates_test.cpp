// SPDX-License-Identifier: MIT
#include "libtorch/kernels/gru_gates.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

torch::Tensor composed(const torch::Tensor& input_gates, const torch::Tensor& hidden_gates,
                       const torch::Tensor& h) {
  auto gi = input_gates.chunk(3, 1);
  auto gh = hidden_gates.chunk(3, 1);
  const torch::Tensor r = torch::sigmoid(gi[0] + gh[0]), z = torch::sigmoid(gi[1] + gh[1]);
  const torch::Tensor c = torch::tanh(gi[2] + r * gh[2]);
  return c + z * (h - c);
}

// The step and the gradients of all three inputs against the composition in float64, with
// pre-activations from -12 to 12 (saturated gates), odd widths, h a row-strided view (a layer of
// the decoder's (B, L, n) state), one thread and two. Tolerance: the float32 polynomials' ~1e-7.
TEST(GruGates, StepAndGradientsEqualTheCompositionInFloat64) {
  testing::KernelSwitch on(true);
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{37}}) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << ", " << threads << " threads");
      testing::ThreadCount thread_scope(threads);
      torch::manual_seed(n);
      const int64_t batch = 9;
      const torch::Tensor gi = (4 * torch::randn({batch, 3 * n})).clamp(-12, 12).requires_grad_();
      const torch::Tensor gh = (4 * torch::randn({batch, 3 * n})).clamp(-12, 12).requires_grad_();
      const torch::Tensor state = torch::randn({batch, 2, n}).requires_grad_();
      const torch::Tensor upstream = torch::randn({batch, n}, torch::kDouble);
      ASSERT_TRUE(gru_gates_applies(gi, gh, state.select(1, 1)));
      const torch::Tensor out = gru_gates(gi, gh, state.select(1, 1));
      (out.to(torch::kDouble) * upstream).sum().backward();
      std::vector<torch::Tensor> got{out.detach(), gi.grad(), gh.grad(), state.grad()};

      std::vector<torch::Tensor> inputs;
      for (const auto& t : {gi, gh, state})
        inputs.push_back(t.detach().to(torch::kDouble).requires_grad_());
      const torch::Tensor expected_out = composed(inputs[0], inputs[1], inputs[2].select(1, 1));
      (expected_out * upstream).sum().backward();
      std::vector<torch::Tensor> expected{expected_out.detach(), inputs[0].grad(), inputs[1].grad(),
                                          inputs[2].grad()};
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(torch::allclose(got[i].to(torch::kDouble), expected[i], 1e-6, 1e-6))
            << "tensor " << i << ": largest difference "
            << (got[i].to(torch::kDouble) - expected[i]).abs().max().item<double>();
      }
    }
  }
}

// Training only: without autograd (decoding keeps LibTorch's operators and its outputs), with the
// kernels off, for other dtypes or shapes, the callers take the composition.
TEST(GruGates, AppliesToFloat32TrainingSteps) {
  testing::KernelSwitch on(true);
  const torch::Tensor gi = torch::randn({2, 6}), gh = torch::randn({2, 6}),
                      h = torch::randn({2, 2});
  EXPECT_TRUE(gru_gates_applies(gi, gh, h));
  EXPECT_FALSE(gru_gates_applies(gi, gh, torch::randn({2, 3})));
  EXPECT_FALSE(gru_gates_applies(torch::randn({6, 2}).t(), gh, h));  // columns strided
  EXPECT_FALSE(gru_gates_applies(gi.to(torch::kDouble), gh, h));
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(gru_gates_applies(gi, gh, h));
  }
  testing::KernelSwitch off(false);
  EXPECT_FALSE(gru_gates_applies(gi, gh, h));
}

}  // namespace
}  // namespace nmtzoo
