// SPDX-License-Identifier: MIT
#include "libtorch/train/update_timing.h"

#include <algorithm>
#include <chrono>

#include "libtorch/kernels/onednn_matmul.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/training_data.h"
#include "torch_free/config/config.h"

namespace nmtzoo {

UpdateTiming time_updates(TrainingEngine& engine, const TrainingData& data, const TrainConfig& t,
                          int64_t warmup, int64_t count, int64_t repeats) {
  using Clock = std::chrono::steady_clock;
  auto batches = epoch_batches(data, t.max_tokens, static_cast<uint64_t>(t.seed), 0);
  auto group_at = [&](int64_t update) {
    std::vector<std::vector<int64_t>> group;
    for (int64_t i = 0; i < t.update_freq; ++i) {
      group.push_back(batches[static_cast<size_t>(update * t.update_freq + i) % batches.size()]);
    }
    return group;
  };
  for (int64_t update = 0; update < warmup; ++update) engine.train_step(group_at(update));
  UpdateTiming timing;
  const auto previous_hook = engine.hooks.on_batch;
  for (int64_t pass = 0; pass < std::max<int64_t>(1, repeats); ++pass) {
    std::vector<BatchShape> shapes;
    engine.hooks.on_batch = [&](const BatchShape& shape) { shapes.push_back(shape); };
    const double products_before = matmul_seconds();
    auto start = Clock::now();
    for (int64_t update = warmup; update < warmup + count; ++update)
      engine.train_step(group_at(update));
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    engine.hooks.on_batch = previous_hook;
    if (pass == 0 || seconds < timing.seconds) {
      timing.seconds = seconds;
      timing.product_seconds = matmul_seconds() - products_before;
      timing.updates = count;
      timing.shapes = std::move(shapes);
    }
  }
  for (const auto& shape : timing.shapes) {
    timing.src_tokens += shape.src_tokens;
    timing.tgt_tokens += shape.tgt_tokens;
  }
  return timing;
}

}  // namespace nmtzoo
