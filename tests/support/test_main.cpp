// The torch tests' main(): like an app, it registers the built-in architectures and sends float32
// products through oneDNN first.
#include <gtest/gtest.h>

#include "kernels/onednn_matmul.h"
#include "models/registry.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nmtzoo::register_builtin_models();
  nmtzoo::install_onednn_matmul();
  return RUN_ALL_TESTS();
}
