// SPDX-License-Identifier: MIT
// The step engine of training (the half of fairseq's trainer.py that is not the loop): the model,
// optimizer, schedule and progress of one run, one update at a time, validation, and checkpoint
// state. What drives it (epochs, stop rules, logging, checkpoint rotation) is
// libtorch/train/trainer.h; benchmarks drive it directly (libtorch/train/update_timing.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "libtorch/runtime/checkpoint.h"
#include "libtorch/train/schedule.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/config.h"

namespace torch::optim {
class Optimizer;
}

namespace nmtzoo {

class Communicator;
class EncoderDecoder;
class WeightEma;
struct TrainingData;

struct ValidationResult {
  double loss = 0;  // label-smoothed, per target token
  double nll = 0;   // per target token
  double ppl = 0;
  double bleu = -1;  // -1 when not computed
  double chrf = -1;  // chrF2; -1 when not computed
  double seconds = 0;
};

// Sums over one update (all ranks), before dividing by the token count.
struct StepStats {
  double loss = 0;
  double nll = 0;
  int64_t tokens = 0;
  double grad_norm = 0;  // of the token-averaged gradients, before clipping
  bool finite = true;    // false: the update was skipped
};

struct EngineHooks {
  // Sees each batch's summed loss before backward (tests inject non-finite values here).
  std::function<void(at::Tensor& loss, int64_t step)> on_batch_loss;
  // Sees the shape of each training batch before its forward pass (benchmarks count FLOPs).
  std::function<void(const BatchShape& shape)> on_batch;
};

class TrainingEngine {
 public:
  // Builds the model from config.training.seed, its optimizer and schedule, on `device`.
  // `data` must outlive the engine. `communicator` is null for single-process training.
  // Installs the caching CPU allocator (libtorch/runtime/caching_cpu_allocator.h) for the process.
  TrainingEngine(const RunConfig& config, const TrainingData& data, c10::Device device,
                 std::shared_ptr<Communicator> communicator, std::ostream& log);
  ~TrainingEngine();

  // One optimizer update over `batches` (indices into data.train; gradients accumulated, summed
  // over ranks, divided by the target token count, clipped). A non-finite loss or gradient skips
  // the update with a warning; training.max_bad_steps of them in a row throw. `budget_fraction`
  // (0 to 1, the same on every rank) is how much of the run's budget is used, for the schedules
  // that decay over it.
  StepStats train_step(const std::vector<std::vector<int64_t>>& batches,
                       double budget_fraction = 0.0);
  // Loss on the validation set and, with training.valid_bleu, its BLEU and chrF2.
  ValidationResult validate();

  // Checkpoint of the weights, optimizer, RNG and progress (atomic; refuses non-finite weights).
  void save_checkpoint(const std::string& path);
  // Restores all of that from a checkpoint of the same config (the caller checks compatibility).
  void restore_checkpoint(const std::string& path);
  // Fine-tuning: the weights of another run's checkpoint of the same model and vocabulary (the
  // caller checks), and its optimizer, schedule position and counts unless training.reset_*
  // say to start them afresh. `info` is read_checkpoint_info(path).
  void initialize_from(const std::string& path, const CheckpointInfo& info);

  TrainingProgress& progress() { return progress_; }
  const TrainingProgress& progress() const { return progress_; }
  double current_lr() const { return current_lr_; }
  EncoderDecoder& model() { return *model_; }
  c10::Device device() const { return device_; }

  EngineHooks hooks;

 private:
  const RunConfig& config_;
  const TrainingData& data_;
  c10::Device device_;
  std::shared_ptr<Communicator> communicator_;
  std::ostream& log_;
  std::shared_ptr<EncoderDecoder> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LearningRateSchedule> schedule_;
  std::unique_ptr<WeightEma> ema_;  // training.ema_decay
  TrainingProgress progress_;
  int64_t bad_steps_in_row_ = 0;
  double current_lr_ = 0;
  bool flushes_denormals_ = false;  // set by this engine, undone by its destructor
};

}  // namespace nmtzoo
