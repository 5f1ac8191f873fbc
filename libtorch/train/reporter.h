// SPDX-License-Identifier: MIT
// What a training run tells its user and its run folder: the console (train and valid lines, a
// progress bar on a terminal), metrics.jsonl, the learning curves drawn from it, and TensorBoard
// event files (training.tensorboard).
#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

#include "libtorch/runtime/checkpoint.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/metrics_log.h"
#include "torch_free/config/config.h"
#include "torch_free/io/progress.h"
#include "torch_free/io/tensorboard_events.h"

namespace nmtzoo {

class TrainingReporter {
 public:
  // `is_main`: only the main process writes files. `terminal`: stderr is a terminal (progress
  // bar, lines cleared before each log line).
  TrainingReporter(const RunConfig& config, std::ostream& log, bool is_main, bool terminal);

  // Starts counting the all-reduce time per update from the communicator's total so far
  // (negative for one process).
  void begin(double all_reduce_seconds) { window_all_reduce_start_ = all_reduce_seconds; }
  // Drops records after `step` from metrics.jsonl and the event file: a run resumed from a
  // checkpoint of `step`, or a new run starting there, continues without repeating a step.
  void start_at(int64_t step);

  // After each finite update: every training.log_every updates a train line and record over the
  // updates since the last one, else (on a terminal, at most 4 times a second) the progress bar.
  // `fraction` of the run's budget done; `all_reduce_seconds` the communicator's total so far,
  // negative for one process.
  void update(const StepStats& stats, double step_seconds, const TrainingProgress& progress,
              double lr, double fraction, double all_reduce_seconds);
  // A valid line and record.
  void validation(const ValidationResult& result, const TrainingProgress& progress);
  // Redraws curve_*.svg from metrics.jsonl.
  void render_curves();
  // Erases the progress bar before other output.
  void clear_line();

 private:
  const RunConfig& config_;
  std::ostream& log_;
  bool is_main_;
  bool terminal_;
  MetricsLog metrics_;
  std::optional<TensorBoardEvents> tensorboard_;  // the main process's, when training.tensorboard
  StepStats window_;
  double window_seconds_ = 0;
  int64_t window_steps_ = 0;
  double window_all_reduce_start_ = 0;
  std::chrono::steady_clock::time_point last_bar_;
};

}  // namespace nmtzoo
