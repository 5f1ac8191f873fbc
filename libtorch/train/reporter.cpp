// SPDX-License-Identifier: MIT
#include "libtorch/train/reporter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ostream>

namespace nmtzoo {

using Clock = std::chrono::steady_clock;

TrainingReporter::TrainingReporter(const RunConfig& config, std::ostream& log, bool is_main,
                                   bool terminal)
    : config_(config),
      log_(log),
      is_main_(is_main),
      terminal_(terminal),
      metrics_(config.run_dir() + "/metrics.jsonl"),
      last_bar_(Clock::now()) {
  if (is_main_ && config.training.tensorboard) tensorboard_.emplace(config.run_dir());
}

void TrainingReporter::start_at(int64_t step) {
  if (!is_main_) return;
  metrics_.truncate_after(step);
  if (tensorboard_) tensorboard_->start_at(step);
}

void TrainingReporter::clear_line() {
  if (terminal_) log_ << "\r\033[K";
}

void TrainingReporter::update(const StepStats& stats, double step_seconds,
                              const TrainingProgress& progress, double lr, double fraction,
                              double all_reduce_seconds) {
  window_.loss += stats.loss;
  window_.nll += stats.nll;
  window_.tokens += stats.tokens;
  window_.grad_norm += stats.grad_norm;
  window_seconds_ += step_seconds;
  ++window_steps_;
  if (progress.step % config_.training.log_every == 0) {
    const double per_token = 1.0 / static_cast<double>(std::max<int64_t>(1, window_.tokens));
    const double tokens_per_second =
        static_cast<double>(window_.tokens) / std::max(1e-9, window_seconds_);
    std::string eta =
        fraction > 0 ? format_duration(progress.wall_seconds * (1 - fraction) / fraction) : "?";
    clear_line();
    // Distributed: the all-reduce's share of each update (waiting for the slowest rank
    // included), the figure that decides how well more processes scale.
    double all_reduce_ms = -1;
    if (all_reduce_seconds >= 0) {
      all_reduce_ms = 1000.0 * (all_reduce_seconds - window_all_reduce_start_) /
                      static_cast<double>(std::max<int64_t>(1, window_steps_));
      window_all_reduce_start_ = all_reduce_seconds;
    }
    log_ << fmt::format(
        "train | epoch {} | step {} | loss {:.3f} | ppl {:.2f} | lr {:.3e} | "
        "{:.0f} tok/s{} | {} | ETA {}\n",
        progress.epoch + 1, progress.step, window_.loss * per_token,
        std::exp(window_.nll * per_token), lr, tokens_per_second,
        all_reduce_ms >= 0 ? fmt::format(" | all-reduce {:.1f} ms/update", all_reduce_ms) : "",
        format_duration(progress.wall_seconds), eta);
    if (is_main_) {
      const double grad_norm =
          window_.grad_norm / static_cast<double>(std::max<int64_t>(1, window_steps_));
      nlohmann::json record{{"type", "train"},
                            {"step", progress.step},
                            {"epoch", progress.epoch},
                            {"loss", window_.loss * per_token},
                            {"nll", window_.nll * per_token},
                            {"lr", lr},
                            {"tokens_per_second", tokens_per_second},
                            {"grad_norm", grad_norm},
                            {"wall_seconds", progress.wall_seconds},
                            {"train_seconds", progress.train_seconds}};
      if (all_reduce_ms >= 0) record["all_reduce_ms_per_update"] = all_reduce_ms;
      metrics_.append(record);
      if (tensorboard_) {
        tensorboard_->write(progress.step, {{"train/loss", window_.loss * per_token},
                                            {"train/ppl", std::exp(window_.nll * per_token)},
                                            {"train/lr", lr},
                                            {"train/tokens_per_second", tokens_per_second},
                                            {"train/grad_norm", grad_norm}});
      }
    }
    window_ = StepStats{};
    window_seconds_ = 0;
    window_steps_ = 0;
  } else if (terminal_ && std::chrono::duration<double>(Clock::now() - last_bar_).count() > 0.25) {
    const int filled = static_cast<int>(fraction * 20);
    log_ << fmt::format("\r\033[K[{}{}] {:3.0f}% epoch {} step {} loss {:.3f} lr {:.2e}",
                        std::string(static_cast<size_t>(filled), '#'),
                        std::string(static_cast<size_t>(20 - filled), '.'), fraction * 100,
                        progress.epoch + 1, progress.step,
                        stats.loss / static_cast<double>(std::max<int64_t>(1, stats.tokens)), lr)
         << std::flush;
    last_bar_ = Clock::now();
  }
}

void TrainingReporter::validation(const ValidationResult& v, const TrainingProgress& progress) {
  clear_line();
  // At an epoch's end the epoch counter has already moved on.
  const int64_t epoch = progress.epoch_batch == 0 ? progress.epoch : progress.epoch + 1;
  log_ << fmt::format(
      "valid | epoch {} | step {} | loss {:.3f} | nll {:.3f} | ppl {:.2f}{} | "
      "best {:.2f} at step {} | {:.1f}s\n",
      epoch, progress.step, v.loss, v.nll, v.ppl,
      v.bleu >= 0 ? fmt::format(" | BLEU {:.2f} | chrF2 {:.2f}", v.bleu, v.chrf) : "",
      progress.best_score, progress.best_step, v.seconds);
  if (!is_main_) return;
  nlohmann::json record{{"type", "valid"},
                        {"step", progress.step},
                        {"epoch", progress.epoch},
                        {"loss", v.loss},
                        {"nll", v.nll},
                        {"ppl", v.ppl},
                        {"wall_seconds", progress.wall_seconds},
                        {"train_seconds", progress.train_seconds}};
  if (v.bleu >= 0) record["bleu"] = v.bleu;
  if (v.chrf >= 0) record["chrf"] = v.chrf;
  metrics_.append(record);
  if (tensorboard_) {
    Scalars scalars{{"valid/loss", v.loss}, {"valid/ppl", v.ppl}};
    if (v.bleu >= 0) scalars.emplace_back("valid/bleu", v.bleu);
    if (v.chrf >= 0) scalars.emplace_back("valid/chrf", v.chrf);
    tensorboard_->write(progress.step, scalars);
  }
}

void TrainingReporter::render_curves() {
  if (is_main_) render_learning_curves(metrics_.path(), config_.run_dir(), config_.model.arch);
}

}  // namespace nmtzoo
