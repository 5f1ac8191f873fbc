// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "libtorch/kernels/kernels.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

// Restores LibTorch's default (denormals kept) on every pool thread at the end of a test.
class KeepDenormalsAfter {
 public:
  ~KeepDenormalsAfter() {
    testing::KernelSwitch on(true);
    set_flush_denormals(false);
  }
};

// 1e-30 * 1e-10 is a denormal; counts how many of a multi-threaded product's elements are not 0.
int64_t denormal_products() {
  at::Tensor tiny =
      torch::full({1 << 20}, 1e-30f);  // large enough for every pool thread to take part
  at::Tensor product = tiny * 1e-10f;
  return product.ne(0).sum().item<int64_t>();
}

TEST(FlushDenormals, FlushesOnEveryPoolThreadAndCanBeUndone) {
  KeepDenormalsAfter restore;
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    ASSERT_EQ(denormal_products(), 1 << 20) << "LibTorch's default keeps denormals";
    ASSERT_TRUE(set_flush_denormals(true)) << "this CPU can flush denormals (SSE3)";
    EXPECT_EQ(denormal_products(), 0) << threads << " threads";
    EXPECT_EQ(torch::tensor(std::numeric_limits<float>::denorm_min()).ne(0).item<bool>(), false)
        << "a denormal input reads as zero";
    ASSERT_TRUE(set_flush_denormals(false));
    EXPECT_EQ(denormal_products(), 1 << 20);
  }
}

TEST(FlushDenormals, SwitchOffChangesNothing) {
  KeepDenormalsAfter restore;
  testing::KernelSwitch off(false);
  EXPECT_FALSE(set_flush_denormals(true));
  EXPECT_EQ(denormal_products(), 1 << 20);
}

}  // namespace
}  // namespace nmtzoo
