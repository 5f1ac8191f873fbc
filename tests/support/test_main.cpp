// The torch tests' main(): like an app, it registers the built-in architectures first.
#include <gtest/gtest.h>

#include "models/registry.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nmtzoo::register_builtin_models();
  return RUN_ALL_TESTS();
}
