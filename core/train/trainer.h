// The training loop: data, model, optimizer, schedule, validation, checkpoints, logging.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/data/corpus.h"
#include "core/data/tokenizers.h"
#include "core/train/checkpoint.h"
#include "core/train/flops.h"
#include "core/train/metrics_log.h"
#include "core/train/schedule.h"

namespace torch::optim {
class Optimizer;
}

namespace nmtzoo {

class EncoderDecoder;
class Communicator;

struct ValidationResult {
  double loss = 0;  // label-smoothed, per target token
  double nll = 0;   // per target token
  double ppl = 0;
  double bleu = -1;  // -1 when not computed
  double seconds = 0;
};

struct TrainResult {
  TrainingProgress progress;
  std::string stop_reason;
  bool interrupted = false;  // stopped by SIGINT / SIGTERM
  ValidationResult last_validation;
};

struct UpdateTiming {
  int64_t updates = 0;
  double seconds = 0;
  int64_t src_tokens = 0;  // non-pad
  int64_t tgt_tokens = 0;  // non-pad
  std::vector<BatchShape> shapes;  // of every batch timed
};

struct TrainerHooks {
  // Sees each batch's summed loss before backward (tests inject non-finite values here).
  std::function<void(at::Tensor& loss, int64_t step)> on_batch_loss;
};

class Trainer {
 public:
  // Prepares everything (tokenizer, data, model, optimizer) and, with `resume`, restores the run
  // from <run dir>/checkpoints/checkpoint_last.pt. Every configuration problem is reported here,
  // before training starts. `communicator` is null for single-process training.
  Trainer(RunConfig config, bool resume, std::ostream& log,
          std::shared_ptr<Communicator> communicator = nullptr);
  ~Trainer();

  TrainResult train();
  ValidationResult validate();
  // For benchmarks: `warmup` untimed updates, then `count` timed ones, on the first training
  // batches of epoch 0, `repeats` times over the same batches; the fastest pass is returned (a
  // shared machine's noise only ever slows a pass down). No validation, logging or checkpoints.
  UpdateTiming time_updates(int64_t warmup, int64_t count, int64_t repeats = 1);
  const Tokenizers& tokenizers() const { return tokenizers_; }

  TrainerHooks hooks;
  const RunConfig& config() const { return config_; }
  EncoderDecoder& model() { return *model_; }
  std::string checkpoint_dir() const;

 private:
  struct StepStats {
    double loss = 0;
    double nll = 0;
    int64_t tokens = 0;
    bool finite = true;
  };
  StepStats train_step(const std::vector<std::vector<int64_t>>& batches);
  void save(const std::string& reason, bool is_best);
  void log_progress(const StepStats& window, double window_seconds, bool final_line);
  bool is_main() const;

  RunConfig config_;
  std::ostringstream quiet_;  // where ranks other than 0 log
  std::ostream& log_;
  std::shared_ptr<Communicator> communicator_;
  c10::Device device_;
  Tokenizers tokenizers_;
  TokenizedCorpus train_data_;
  std::vector<int64_t> train_lengths_;
  TokenizedCorpus valid_data_;
  std::vector<std::string> valid_sources_;
  std::vector<std::string> valid_references_;
  std::shared_ptr<EncoderDecoder> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LearningRateSchedule> schedule_;
  TrainingProgress progress_;
  MetricsLog metrics_;
  std::string fingerprint_;
  int64_t bad_steps_in_row_ = 0;
  std::vector<BatchShape>* record_shapes_ = nullptr;
  double current_lr_ = 0;
};

// Installs SIGINT/SIGTERM handlers that ask the running Trainer to stop after its current update.
void install_stop_signal_handlers();
bool stop_requested();

}  // namespace nmtzoo
