// SPDX-License-Identifier: MIT
#include "libtorch/kernels/batched_matmul.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/kernels/onednn_matmul.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

TEST(BatchedMatmul, MatchesTorchMatmulForwardAndBackward) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  torch::manual_seed(5);
  struct Case {
    bool ta, tb;
  };
  for (Case c : {Case{false, false}, Case{false, true}, Case{true, false}}) {
    auto a =
        torch::randn(c.ta ? std::vector<int64_t>{3, 4, 7, 5} : std::vector<int64_t>{3, 4, 5, 7})
            .requires_grad_();
    auto b =
        torch::randn(c.tb ? std::vector<int64_t>{3, 4, 6, 7} : std::vector<int64_t>{3, 4, 7, 6})
            .requires_grad_();
    const int64_t before = onednn_matmul_products();
    auto ours = batched_matmul(a, b, c.ta, c.tb);
    EXPECT_EQ(onednn_matmul_products() - before, 12) << "one product per matrix, through oneDNN";
    auto weights = torch::randn_like(ours);
    (ours * weights).sum().backward();
    auto grad_a = a.grad().clone();
    auto grad_b = b.grad().clone();
    a.mutable_grad().zero_();
    b.mutable_grad().zero_();
    auto reference = torch::matmul(c.ta ? a.transpose(-2, -1) : a, c.tb ? b.transpose(-2, -1) : b);
    (reference * weights).sum().backward();
    EXPECT_TRUE(torch::allclose(ours, reference, 1e-5, 1e-5)) << c.ta << c.tb;
    EXPECT_TRUE(torch::allclose(grad_a, a.grad(), 1e-5, 1e-5)) << c.ta << c.tb;
    EXPECT_TRUE(torch::allclose(grad_b, b.grad(), 1e-5, 1e-5)) << c.ta << c.tb;
  }
}

TEST(BatchedMatmul, NonContiguousInputsAndMismatchedSizes) {
  auto a = torch::randn({2, 6, 3}).transpose(1, 2);  // (2, 3, 6), not contiguous
  auto b = torch::randn({2, 6, 4});
  EXPECT_TRUE(torch::allclose(batched_matmul(a, b), torch::matmul(a, b), 1e-5, 1e-5));
  EXPECT_THROW(batched_matmul(torch::randn({2, 3, 5}), torch::randn({2, 4, 2})), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
