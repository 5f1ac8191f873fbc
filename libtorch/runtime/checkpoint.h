// SPDX-License-Identifier: MIT
// Checkpoints: model and optimizer state, training progress, the RNG state, the resolved config
// and a fingerprint of the tokenizer, in one file written atomically.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "torch_free/config/config.h"
#include "torch_free/data/tokenizers.h"

namespace torch::optim {
class Optimizer;
}

namespace nmtzoo {

class EncoderDecoder;

// One start or resume of a run whose training.max_time is stated for a reference machine: the
// float32 matmul ceiling measured at that start, and so how many seconds of the budget each
// second of this machine counts for.
struct BudgetSession {
  double started_at = 0;       // the run's wall_seconds when the session started
  double measured_gflops = 0;  // this machine's ceiling then
  double scale = 1;            // measured_gflops / training.reference_gflops
};

struct TrainingProgress {
  int64_t step = 0;          // optimizer updates done
  int64_t epoch = 0;         // the epoch in progress, 0-based
  int64_t epoch_batch = 0;   // batches of that epoch already consumed
  double train_seconds = 0;  // training time so far, validation excluded
  double wall_seconds = 0;   // wall-clock time so far, validation included
  // What training.max_time is measured against: wall_seconds, or with training.reference_gflops
  // the reference machine's seconds (each session's wall-clock seconds times its scale).
  double budget_seconds = 0;
  std::vector<BudgetSession> budget_sessions;  // with training.reference_gflops only
  double best_score = std::numeric_limits<double>::quiet_NaN();  // by training.best_metric
  int64_t best_step = 0;
  int64_t validations_without_improvement = 0;
  double lr_factor = 1.0;   // decay applied by the plateau schedule
  int64_t tokens_seen = 0;  // target tokens trained on
  // The learning-rate schedule is at step + schedule_offset (non-zero after a fine-tuning start
  // that resets the schedule but not the counts, or the other way round).
  int64_t schedule_offset = 0;
};

struct CheckpointInfo {
  RunConfig config;  // as resolved when the checkpoint was written
  TrainingProgress progress;
  std::string tokenizer_fingerprint;
  bool has_optimizer = false;
  // The SentencePiece models, embedded since format version 2 (empty before; the target's also
  // when the vocabulary is joint).
  std::string src_tokenizer_model;
  std::string tgt_tokenizer_model;
};

// Writes atomically: a crash at any instant leaves the previous file at `path` intact; a failed
// write throws IoError naming `path`. Refuses (std::runtime_error) to write non-finite weights.
// The tokenizer models are embedded, so the checkpoint translates from anywhere.
// `training_weights` (in model.parameters() order), when given, are stored beside the model's:
// with a weight average (training.ema_decay) the model holds the average and these the weights
// training continues from.
void save_checkpoint(const std::string& path, const RunConfig& config, EncoderDecoder& model,
                     torch::optim::Optimizer* optimizer, const TrainingProgress& progress,
                     const Tokenizers& tokenizers,
                     const std::vector<at::Tensor>* training_weights = nullptr);

// A checkpoint that cannot be read, by what is wrong with it, so that callers can tell a missing
// file from a bad one (the Python module raises FileNotFoundError, IsADirectoryError, ValueError).
struct CheckpointError : std::runtime_error {
  enum class Kind { kMissing, kDirectory, kUnreadable };
  CheckpointError(Kind kind_, const std::string& message)
      : std::runtime_error(message), kind(kind_) {}
  Kind kind;
};

// Reads everything but the model tensors, after checking the CRC-32 of every record ("checksum
// mismatch" names the file). Errors name the file: CheckpointError.
CheckpointInfo read_checkpoint_info(const std::string& path);

// Loads the weights (and the optimizer state and RNG state, when given) into objects built from
// the checkpoint's config. Verifies nothing: read_checkpoint_info, which every load starts with
// (it gives the config to build from), has checked the file.
void load_checkpoint_state(const std::string& path, EncoderDecoder& model,
                           torch::optim::Optimizer* optimizer = nullptr, bool restore_rng = false);
// Loads the training weights a checkpoint holds beside the model's into `model`; false (and
// `model` untouched) when it holds none.
bool load_training_weights(const std::string& path, EncoderDecoder& model);

}  // namespace nmtzoo
