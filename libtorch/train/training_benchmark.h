// SPDX-License-Identifier: MIT
// nmtzoo-bench's training figures: a config's model trained for a few timed updates on its own
// data, against the float32 matmul ceiling measured in the same run. A benchmark, never a test.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace nmtzoo {

struct MatmulCeiling;

struct TrainingBenchmarkOptions {
  std::string config;                  // the run config whose model and batches are timed
  std::vector<std::string> overrides;  // --set KEY=VALUE
  int64_t warmup = 3;                  // untimed updates first
  int64_t steps = 20;                  // timed updates
  int64_t repeats = 3;                 // passes over the same updates; the fastest counts
  int64_t threads = 0;                 // 0 = the config's
  std::string export_dir;              // batch shapes for the Python peer, when not empty
  std::string trace_dir;               // a Chrome trace of the timed updates, when not empty
};

// Prints the figures to `out` and returns them as JSON; measures `ceiling` again after the updates
// (the machine's speed drifts: the best of before and after counts).
nlohmann::json benchmark_training(const TrainingBenchmarkOptions& options, MatmulCeiling& ceiling,
                                  std::ostream& out);

}  // namespace nmtzoo
