// SPDX-License-Identifier: MIT
// training.max_time, counted in seconds of the machine it was stated for. Without
// training.reference_gflops a second is a wall-clock second here. With it, each start or resume
// measures this machine's float32 matmul ceiling and counts each second here as
// (measured / reference) seconds of the budget, so a run on a machine twice as fast gets half
// the wall-clock time, and one resumed elsewhere has its remaining budget scaled the same way.
// Each validation measures the ceiling again: a shared machine whose speed drifts during a run
// (measured here: 344 GFLOP/s at one run's start, 275 at its end) has every stretch counted at
// the speed it had. Each measurement starts a new entry of progress.budget_sessions.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>

#include "libtorch/runtime/checkpoint.h"
#include "torch_free/config/config.h"

namespace nmtzoo {

class Communicator;

// This machine's float32 matmul ceiling now, in GFLOP/s (MatmulCeiling's best backend).
double measure_matmul_ceiling();

class TimeBudget {
 public:
  // `ceiling_probe` measures the ceiling; tests give one that plays a drifting machine.
  explicit TimeBudget(std::function<double()> ceiling_probe = measure_matmul_ceiling);

  // Starts this session's clock from `progress` (earlier sessions' time) and, with a reference,
  // measures the ceiling, logs the scale and records the session in `progress`. With several
  // processes, all measure at once (sharing cores as they will while training) and the job's
  // ceiling is their sum.
  void start(const TrainConfig& config, TrainingProgress& progress, std::ostream& log,
             Communicator* communicator = nullptr);
  // Measures the ceiling again (all processes at once, like start) and counts the time from now
  // on at the new scale; logs the change when it exceeds 5%. Nothing without a reference.
  void remeasure(TrainingProgress& progress, std::ostream& log,
                 Communicator* communicator = nullptr);
  // Brings progress.wall_seconds and progress.budget_seconds up to now.
  void update(TrainingProgress& progress) const;
  double scale() const { return scale_; }
  bool exhausted(const TrainingProgress& progress) const;
  double fraction(const TrainingProgress& progress) const;  // of max_time used; 0 without one
  std::string stop_reason(const TrainingProgress& progress) const;

 private:
  bool scaled() const { return reference_gflops_ > 0 && max_time_ > 0; }
  // Measures the ceiling, sets scale_, records a session starting now in `progress` and restarts
  // the clock after the measurement; returns the ceiling.
  double measure_session(TrainingProgress& progress, Communicator* communicator);

  std::function<double()> probe_;
  double max_time_ = 0;
  double reference_gflops_ = 0;
  double scale_ = 1;
  std::chrono::steady_clock::time_point start_;
  double wall_offset_ = 0;
  double budget_offset_ = 0;
};

}  // namespace nmtzoo
