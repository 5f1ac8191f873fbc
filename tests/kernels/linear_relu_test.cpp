// SPDX-License-Identifier: MIT
#include "libtorch/kernels/linear_relu.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

struct LinearInputs {
  torch::Tensor x, weight, bias;
};

LinearInputs random_inputs(const std::vector<int64_t>& x_sizes, int64_t out, uint64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn(x_sizes), torch::randn({out, x_sizes.back()}) / 3, torch::randn({out})};
}

// The output and the gradients of the inputs that want one, against relu(linear) in float64.
std::vector<torch::Tensor> run(const LinearInputs& in, const torch::Tensor& upstream, bool fused,
                               const std::vector<bool>& wants_grad) {
  std::vector<torch::Tensor> leaves;
  for (const auto& t : {in.x, in.weight, in.bias}) {
    const size_t i = leaves.size();
    leaves.push_back((fused ? t : t.to(torch::kDouble)).detach().requires_grad_(wants_grad[i]));
  }
  const torch::Tensor out =
      fused ? linear_relu(leaves[0], leaves[1], leaves[2])
            : torch::relu(torch::nn::functional::linear(leaves[0], leaves[1], leaves[2]));
  (out.to(torch::kDouble) * upstream).sum().backward();
  std::vector<torch::Tensor> result{out.detach().to(torch::kDouble)};
  for (const auto& leaf : leaves)
    result.push_back(leaf.grad().defined() ? leaf.grad().to(torch::kDouble) : leaf.grad());
  return result;
}

// Values and the three gradients against the composition in float64: 2-D and 3-D inputs, odd
// widths, pre-activations on both sides of zero (some rows all negative), one thread and two, and
// with only some inputs wanting a gradient. Tolerance: float32 products over `in` terms.
TEST(LinearRelu, ValuesAndGradientsEqualTheCompositionInFloat64) {
  testing::KernelSwitch on(true);
  const std::vector<std::vector<int64_t>> shapes{{1, 1}, {5, 7}, {3, 11, 24}, {2, 40, 33}};
  const std::vector<std::vector<bool>> wants{
      {true, true, true}, {false, true, true}, {true, false, false}};
  for (size_t s = 0; s < shapes.size(); ++s) {
    for (const int threads : {1, 2}) {
      for (const auto& wanted : wants) {
        SCOPED_TRACE(::testing::Message()
                     << "shape " << s << ", " << threads << " threads, x wants a gradient "
                     << wanted[0] << ", weight " << wanted[1]);
        testing::ThreadCount thread_scope(threads);
        const int64_t out_features = 2 * shapes[s].back() + 1;
        LinearInputs in = random_inputs(shapes[s], out_features, s);
        in.bias.narrow(0, 0, 1).fill_(-100);  // a column that is never positive
        std::vector<int64_t> out_sizes = shapes[s];
        out_sizes.back() = out_features;
        const torch::Tensor upstream = torch::randn(out_sizes, torch::kDouble);
        const auto got = run(in, upstream, true, wanted);
        const auto expected = run(in, upstream, false, wanted);
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i].defined(), expected[i].defined()) << "tensor " << i;
          if (!got[i].defined()) continue;
          EXPECT_EQ(got[i].sizes(), expected[i].sizes()) << "tensor " << i;
          EXPECT_TRUE(torch::allclose(got[i], expected[i], 1e-5, 1e-5))
              << "tensor " << i << ": largest difference "
              << (got[i] - expected[i]).abs().max().item<double>();
        }
        EXPECT_GT(got[0].eq(0).sum().item<int64_t>(), 0) << "some outputs are cut by the ReLU";
      }
    }
  }
}

// Training only: without autograd (decoding keeps LibTorch's operators and its outputs), with the
// kernels off, under autocast, for other dtypes or a strided x, the callers take the composition.
TEST(LinearRelu, AppliesToFloat32TrainingOnly) {
  testing::KernelSwitch on(true);
  const LinearInputs in = random_inputs({4, 6}, 5, 1);
  EXPECT_TRUE(linear_relu_applies(in.x, in.weight, in.bias));
  EXPECT_FALSE(linear_relu_applies(in.x.t(), in.weight.narrow(1, 0, 4), in.bias));  // x strided
  EXPECT_FALSE(linear_relu_applies(in.x, in.weight, torch::randn({6})));
  EXPECT_FALSE(linear_relu_applies(in.x.to(torch::kDouble), in.weight, in.bias));
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(linear_relu_applies(in.x, in.weight, in.bias));
  }
  at::autocast::set_cpu_enabled(true);
  EXPECT_FALSE(linear_relu_applies(in.x, in.weight, in.bias));
  at::autocast::set_cpu_enabled(false);
  testing::KernelSwitch off(false);
  EXPECT_FALSE(linear_relu_applies(in.x, in.weight, in.bias));
  EXPECT_THROW(linear_relu(in.x, in.weight, in.bias), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
