// SPDX-License-Identifier: MIT
#include "libtorch/train/engine.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

#include "libtorch/kernels/kernels.h"
#include "libtorch/train/training_data.h"
#include "tests/support/kernel_scopes.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

// Whether a product that underflows to a denormal (1e-30 * 1e-10) comes out as zero on the pool.
bool denormals_flushed() {
  return (torch::full({1 << 20}, 1e-30f) * 1e-10f).ne(0).sum().item<int64_t>() == 0;
}

TEST(TrainingEngine, FlushesDenormalsOnlyWhileItLives) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  testing::TinyRun run("transformer", {"training.valid_bleu=false", "training.best_metric=loss"});
  std::ostringstream log;
  TrainingData data = prepare_training_data(run.config(), log);
  ASSERT_FALSE(denormals_flushed()) << "LibTorch's default";
  {
    TrainingEngine engine(run.config(), data, torch::kCPU, nullptr, log);
    EXPECT_TRUE(denormals_flushed()) << "training flushes them (libtorch/kernels/kernels.h)";
  }
  EXPECT_FALSE(denormals_flushed()) << "decoding after training in the same process keeps them";
}

}  // namespace
}  // namespace nmtzoo
