// SPDX-License-Identifier: MIT
#include "libtorch/train/trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/run_start.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/train/distributed.h"
#include "libtorch/train/reporter.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/directory_lock.h"
#include "torch_free/io/process_stats.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop_requested{false};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void install_stop_signal_handlers() {
  // No handler: the signals are blocked everywhere and one thread waits for them (see
  // block_stop_signals for why).
  static const bool once = [] {
    block_stop_signals();
    std::thread([] {
      for (;;) {
        wait_for_stop_signal();
        g_stop_requested = true;
      }
    }).detach();
    return true;
  }();
  (void)once;
}

bool stop_requested() { return g_stop_requested; }

Trainer::Trainer(RunConfig config, bool resume, std::ostream& log,
                 std::shared_ptr<Communicator> communicator)
    : config_(std::move(config)),
      log_(communicator == nullptr || communicator->rank() == 0 ? log : quiet_),
      communicator_(std::move(communicator)),
      folder_(config_.run_dir() + "/checkpoints", config_.training.keep_last,
              config_.training.keep_best, selection_metric_name(config_.training.best_metric),
              config_.training.best_metric != SelectionMetric::kLoss) {
  resolve_run_paths(config_);
  check_run_config(config_);
  const c10::Device device = resolve_device(config_.training.device);
  configure_threads(config_.training.threads, "training.threads");
  if (is_main()) {
    run_lock_ = std::make_unique<DirectoryLock>(config_.run_dir(), "nmtzoo-train");
    // Temporary files of a run killed mid-write; the lock guarantees none is being written.
    const size_t stale = remove_stale_temporary_files(config_.run_dir()) +
                         remove_stale_temporary_files(folder_.dir());
    if (stale > 0) log_ << fmt::format("removed {} partial file(s) left by a killed run\n", stale);
  }
  const std::string last = folder_.last();
  if (!resume && fs::exists(last)) {
    throw std::runtime_error(
        "run folder '" + config_.run_dir() + "' already holds checkpoints; " +
        "continue it with --resume, or set training.output_dir to a new folder");
  }
  if (resume && !fs::exists(last)) {
    throw std::runtime_error("--resume: no checkpoint at '" + last + "'");
  }
  // Before anything of the run is written: the checkpoint it resumes or is fine-tuned from.
  const StartCheckpoints start = check_start(config_, resume ? last : "");
  fs::create_directories(folder_.dir());
  const bool terminal = ::isatty(STDERR_FILENO) && &log_ == &std::cerr;
  reporter_ = std::make_unique<TrainingReporter>(config_, log_, is_main(), terminal);

  data_ = prepare_training_data(config_, log_, communicator_.get(), terminal, &start,
                                config_.run_dir());
  engine_ = std::make_unique<TrainingEngine>(config_, data_, device, communicator_, log_);
  TrainingProgress& progress = engine_->progress();
  if (resume) {
    engine_->restore_checkpoint(last);
    log_ << fmt::format("resumed from {} at step {} (epoch {}, batch {})\n", last, progress.step,
                        progress.epoch + 1, progress.epoch_batch);
  } else {
    const TrainConfig& t = config_.training;
    if (start.init_from) {
      engine_->initialize_from(t.init_from, *start.init_from);
      auto fresh = [](bool reset) { return reset ? "fresh" : "kept"; };
      log_ << fmt::format(
          "fine-tuning from {} at step {} ({} optimizer, {} schedule, {} progress)\n", t.init_from,
          progress.step, fresh(t.reset_optimizer), fresh(t.reset_schedule),
          fresh(t.reset_progress));
    }
    if (communicator_) communicator_->broadcast_parameters(model());
  }
  // A resumed run's records after its checkpoint, or those of a run killed before its first
  // checkpoint, would repeat steps.
  reporter_->start_at(progress.step);
  if (communicator_ && communicator_->rank() > 0) {
    // Same weights everywhere, but each rank its own dropout masks.
    torch::manual_seed(static_cast<uint64_t>(config_.training.seed) * 1000003ULL +
                       static_cast<uint64_t>(communicator_->rank() + progress.step));
  }
  if (is_main())
    save_config(config_, resolve_arch(config_.model.arch), config_.run_dir() + "/config.yaml");

  log_ << fmt::format(
      "model {} ({}): {:.2f}M parameters | {} on {} with {} threads{} | train: {} | valid: {} "
      "pairs\n",
      config_.model.arch, resolve_arch(config_.model.arch),
      static_cast<double>(count_parameters(model())) / 1e6,
      config_.training.bf16 ? "bf16 autocast" : "float32", device.str(), torch::get_num_threads(),
      communicator_ ? fmt::format(" x {} processes", communicator_->world_size()) : "",
      data_.filtered.summary(), data_.valid.size());
}

Trainer::~Trainer() = default;

bool Trainer::is_main() const { return !communicator_ || communicator_->rank() == 0; }

void Trainer::save(const std::string& reason, std::optional<double> score, bool is_best) {
  if (!is_main()) return;
  const std::string numbered =
      folder_.save(engine_->progress().step, score, is_best,
                   [&](const std::string& path) { engine_->save_checkpoint(path); });
  log_ << fmt::format("saved {} ({}){}\n", numbered, reason, is_best ? ", new best" : "");
}

ValidationResult Trainer::validate_and_save(const std::string& reason) {
  const TrainConfig& t = config_.training;
  TrainingProgress& progress = engine_->progress();
  ValidationResult v = engine_->validate();
  const bool by_loss = t.best_metric == SelectionMetric::kLoss;
  const double score = by_loss ? v.loss : t.best_metric == SelectionMetric::kBleu ? v.bleu : v.chrf;
  const bool improved = std::isnan(progress.best_score) ||
                        (by_loss ? score < progress.best_score : score > progress.best_score);
  if (improved) {
    progress.best_score = score;
    progress.best_step = progress.step;
    progress.validations_without_improvement = 0;
  } else {
    ++progress.validations_without_improvement;
    if (t.schedule == LrSchedule::kPlateau && t.plateau_patience > 0 &&
        progress.validations_without_improvement % t.plateau_patience == 0) {
      progress.lr_factor *= t.plateau_factor;
    }
  }
  budget_.remeasure(progress, log_, communicator_.get());
  reporter_->validation(v, progress);
  save(reason, score, improved);
  reporter_->render_curves();
  last_validated_ = progress.step;
  return v;
}

double Trainer::progress_fraction(double batches_in_epoch) const {
  const TrainConfig& t = config_.training;
  const TrainingProgress& progress = engine_->progress();
  double fraction = 0;
  if (t.max_steps > 0) {
    fraction =
        std::max(fraction, static_cast<double>(progress.step) / static_cast<double>(t.max_steps));
  }
  fraction = std::max(fraction, budget_.fraction(progress));
  if (t.max_epochs > 0 && batches_in_epoch > 0) {
    fraction = std::max(fraction, (static_cast<double>(progress.epoch) +
                                   static_cast<double>(progress.epoch_batch) / batches_in_epoch) /
                                      static_cast<double>(t.max_epochs));
  }
  return std::min(fraction, 1.0);
}

double Trainer::schedule_fraction(double batches_in_epoch) const {
  const LrSchedule schedule = config_.training.schedule;
  if (schedule != LrSchedule::kLinear && schedule != LrSchedule::kCosine) return 0.0;
  const double fraction = progress_fraction(batches_in_epoch);
  // Each rank's clock differs a little; replicas must step with the same rate.
  if (!communicator_) return fraction;
  return communicator_->sum(fraction) / static_cast<double>(communicator_->world_size());
}

bool Trainer::patience_exhausted(TrainResult& result) const {
  const int64_t patience = config_.training.patience;
  if (patience <= 0 || engine_->progress().validations_without_improvement < patience) return false;
  result.stop_reason = fmt::format("early stopping: {} validations without improvement", patience);
  return true;
}

bool Trainer::budget_exhausted(TrainResult& result) const {
  const TrainConfig& t = config_.training;
  const TrainingProgress& progress = engine_->progress();
  const bool signalled =
      communicator_ ? communicator_->any(g_stop_requested) : g_stop_requested.load();
  if (signalled) {
    result.interrupted = true;
    result.stop_reason = "interrupted by signal";
    return true;
  }
  if (t.max_steps > 0 && progress.step >= t.max_steps) {
    result.stop_reason = fmt::format("reached training.max_steps = {}", t.max_steps);
    return true;
  }
  const bool out_of_time = budget_.exhausted(progress);
  if (t.max_time > 0 && (communicator_ ? communicator_->any(out_of_time) : out_of_time)) {
    result.stop_reason = budget_.stop_reason(progress);
    return true;
  }
  return false;
}

TrainResult Trainer::train() {
  const TrainConfig& t = config_.training;
  TrainingProgress& progress = engine_->progress();
  budget_.start(t, progress, log_, communicator_.get());
  last_validated_ = progress.step;
  reporter_->begin(communicator_ ? communicator_->all_reduce_seconds() : -1.0);
  TrainResult result;
  result.setup_rss_mb = resident_set_mb();

  bool stop = false;
  bool heap_trimmed = false;  // once: later trims refault the freed step buffers (epoch_trim.md)
  while (!stop) {
    auto batches = epoch_batches(data_, t.max_tokens, static_cast<uint64_t>(t.seed),
                                 static_cast<uint64_t>(progress.epoch));
    if (communicator_) batches = communicator_->shard(batches);
    if (!heap_trimmed) release_freed_memory();  // the epoch's sort and shuffle buffers: O(pairs)
    heap_trimmed = true;
    const auto n = static_cast<int64_t>(batches.size());
    while (progress.epoch_batch < n && !stop) {
      const int64_t begin = progress.epoch_batch;
      const int64_t end = std::min(n, begin + t.update_freq);
      std::vector<std::vector<int64_t>> group(batches.begin() + begin, batches.begin() + end);
      auto step_start = Clock::now();
      StepStats stats = engine_->train_step(group, schedule_fraction(static_cast<double>(n)));
      const double step_seconds = seconds_since(step_start);
      progress.epoch_batch = end;
      progress.train_seconds += step_seconds;
      budget_.update(progress);
      if (result.first_update_seconds < 0) {
        result.first_update_seconds = seconds_since_process_start();
        log_ << fmt::format(
            "first update {:.1f} s after the process started ({:.0f} MB resident "
            "before it)\n",
            result.first_update_seconds, result.setup_rss_mb);
      }
      if (stats.finite) {
        reporter_->update(stats, step_seconds, progress, engine_->current_lr(),
                          progress_fraction(static_cast<double>(n)),
                          communicator_ ? communicator_->all_reduce_seconds() : -1.0);
        if (t.valid_every > 0 && progress.step % t.valid_every == 0 &&
            progress.step != last_validated_) {
          result.last_validation = validate_and_save("validation");
          stop = patience_exhausted(result);
        }
      }
      // Even after an early stop: a signal still marks the run interrupted.
      if (budget_exhausted(result)) stop = true;
    }
    if (progress.epoch_batch >= n) {
      ++progress.epoch;
      progress.epoch_batch = 0;
      if (!stop && progress.step != last_validated_) {
        result.last_validation = validate_and_save("end of epoch");
        stop = patience_exhausted(result);
      }
      if (t.max_epochs > 0 && progress.epoch >= t.max_epochs && !stop) {
        result.stop_reason = fmt::format("reached training.max_epochs = {}", t.max_epochs);
        stop = true;
      }
    }
  }
  reporter_->clear_line();
  budget_.update(progress);
  if (result.interrupted) {
    save("interrupted", std::nullopt, false);
  } else if (progress.step != last_validated_) {
    result.last_validation = validate_and_save("end of training");
  }
  result.progress = progress;
  return result;
}

}  // namespace nmtzoo
