// SPDX-License-Identifier: MIT
#include "libtorch/train/update_timing.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <sstream>

#include "libtorch/train/engine.h"
#include "libtorch/train/training_data.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

TEST(UpdateTiming, ReportsTheFastestPassOverTheSameBatches) {
  testing::TinyRun run("transformer", {"training.valid_bleu=false", "training.best_metric=loss",
                                       "training.update_freq=2", "training.max_tokens=100"});
  std::ostringstream log;
  const RunConfig& config = run.config();
  TrainingData data = prepare_training_data(config, log);
  TrainingEngine engine(config, data, torch::kCPU, nullptr, log);
  UpdateTiming timing = time_updates(engine, data, config.training, /*warmup=*/1, /*count=*/3,
                                     /*repeats=*/2);
  EXPECT_EQ(timing.updates, 3);
  EXPECT_EQ(timing.shapes.size(), 6u);  // two batches per update, one pass's worth
  EXPECT_GT(timing.seconds, 0.0);
  EXPECT_GT(timing.product_seconds, 0.0) << "every update multiplies matrices";
  EXPECT_LT(timing.product_seconds, timing.seconds);
  int64_t tgt = 0;
  for (const auto& shape : timing.shapes) tgt += shape.tgt_tokens;
  EXPECT_EQ(timing.tgt_tokens, tgt);
  EXPECT_EQ(engine.progress().step, 1 + 2 * 3) << "warmup and every timed pass update the model";
  EXPECT_FALSE(engine.hooks.on_batch) << "the timing's batch observer is removed afterwards";
  EXPECT_FALSE(std::filesystem::exists(config.run_dir() + "/checkpoints"));
}

}  // namespace
}  // namespace nmtzoo
