// SPDX-License-Identifier: MIT
// Timing of training updates for benchmarks: drives a TrainingEngine directly, with no
// validation, logging or checkpoints.
#pragma once

#include <cstdint>
#include <vector>

#include "torch_free/archs/registry.h"

namespace nmtzoo {

class TrainingEngine;
struct TrainingData;
struct TrainConfig;

struct UpdateTiming {
  int64_t updates = 0;
  double seconds = 0;
  double product_seconds =
      0;  // of `seconds`, inside matrix products (libtorch/kernels/onednn_matmul.h)
  int64_t src_tokens = 0;          // non-pad
  int64_t tgt_tokens = 0;          // non-pad
  std::vector<BatchShape> shapes;  // of every batch timed
};

// `warmup` untimed updates, then `count` timed ones, on the first training batches of epoch 0,
// `repeats` times over the same batches; the fastest pass is returned (a shared machine's noise
// only ever slows a pass down).
UpdateTiming time_updates(TrainingEngine& engine, const TrainingData& data,
                          const TrainConfig& config, int64_t warmup, int64_t count,
                          int64_t repeats = 1);

}  // namespace nmtzoo
