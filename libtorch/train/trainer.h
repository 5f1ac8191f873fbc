// SPDX-License-Identifier: MIT
// The training loop (fairseq_cli/train.py to the engine's trainer.py): sets a run up (run
// folder, data, engine, resume), then runs epochs of updates until a stop rule fires, validating,
// deciding the plateau schedule, and rotating checkpoints, with a reporter for the console and
// metrics.jsonl.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "libtorch/runtime/checkpoint.h"
#include "libtorch/train/checkpoint_folder.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/time_budget.h"
#include "libtorch/train/training_data.h"
#include "torch_free/config/config.h"

namespace nmtzoo {

class Communicator;
class DirectoryLock;
class EncoderDecoder;
class TrainingReporter;

struct TrainResult {
  TrainingProgress progress;
  std::string stop_reason;
  bool interrupted = false;          // stopped by SIGINT / SIGTERM
  double first_update_seconds = -1;  // from the process's start to this session's first update
  double setup_rss_mb = -1;          // resident set before the first update: model and data
  ValidationResult last_validation;
};

class Trainer {
 public:
  // Prepares everything (tokenizer, data, model, optimizer) and, with `resume`, restores the run
  // from <run dir>/checkpoints/checkpoint_last.pt. Every configuration problem is reported here,
  // before training starts, and the checkpoint resumed or fine-tuned from (training.init_from) is
  // checked against the config before any tokenizer or data is prepared
  // (libtorch/runtime/run_start.h). `communicator` is null for single-process training.
  Trainer(RunConfig config, bool resume, std::ostream& log,
          std::shared_ptr<Communicator> communicator = nullptr);
  ~Trainer();

  TrainResult train();

  const RunConfig& config() const { return config_; }
  const TrainingData& data() const { return data_; }
  TrainingEngine& engine() { return *engine_; }
  EncoderDecoder& model() { return engine_->model(); }
  std::string checkpoint_dir() const { return folder_.dir(); }

 private:
  bool is_main() const;
  // Validates, updates best score, patience and the plateau decay, logs, and checkpoints.
  ValidationResult validate_and_save(const std::string& reason);
  void save(const std::string& reason, std::optional<double> score, bool is_best);
  // The share of the run's budget (steps, time or epochs, whichever is furthest) done.
  double progress_fraction(double batches_in_epoch) const;
  // progress_fraction, agreed by all ranks, for the linear and cosine schedules; 0 for the others.
  double schedule_fraction(double batches_in_epoch) const;
  // Stop rules; each sets result.stop_reason (and `interrupted`) when it fires.
  bool patience_exhausted(TrainResult& result) const;
  bool budget_exhausted(TrainResult& result) const;  // signal, max_steps, max_time

  RunConfig config_;
  std::ostringstream quiet_;  // where ranks other than 0 log
  std::ostream& log_;
  std::shared_ptr<Communicator> communicator_;
  CheckpointFolder folder_;
  std::unique_ptr<DirectoryLock> run_lock_;  // held by the main process for the whole run
  TrainingData data_;
  std::unique_ptr<TrainingEngine> engine_;
  std::unique_ptr<TrainingReporter> reporter_;
  TimeBudget budget_;
  int64_t last_validated_ = 0;
};

// Makes SIGINT/SIGTERM ask the running Trainer to stop after its current update. Call it first in
// main(), before any thread starts: the signals are blocked in the calling thread and the threads
// it starts later, and taken by a waiting thread (sigwait).
void install_stop_signal_handlers();
bool stop_requested();

}  // namespace nmtzoo
