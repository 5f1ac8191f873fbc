// SPDX-License-Identifier: MIT
// The torch tests' main(): like an app, it registers the built-in architectures and sends float32
// products through oneDNN first. It also installs training's caching CPU allocator, so that every
// test's tensors go through it.
#include <gtest/gtest.h>

#include "libtorch/kernels/onednn_matmul.h"
#include "libtorch/runtime/caching_cpu_allocator.h"
#include "torch_free/archs/registry.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nmtzoo::register_builtin_models();
  nmtzoo::install_caching_cpu_allocator();
  nmtzoo::install_onednn_matmul();
  return RUN_ALL_TESTS();
}
