#include "core/train/time_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>

#include "core/io/progress.h"
#include "core/runtime/matmul_ceiling.h"
#include "core/train/distributed.h"

namespace nmtzoo {

void TimeBudget::start(const TrainConfig& config, TrainingProgress& progress, std::ostream& log,
                       Communicator* communicator) {
  max_time_ = config.max_time;
  start_ = std::chrono::steady_clock::now();
  wall_offset_ = progress.wall_seconds;
  budget_offset_ = progress.budget_seconds;
  scale_ = 1;
  if (config.reference_gflops <= 0 || config.max_time <= 0) return;
  // The machine's ceiling is its faster backend's, as the README's figures state it.
  if (communicator != nullptr) communicator->barrier();
  MatmulCeiling ceiling;
  ceiling.measure();
  const double gflops = communicator != nullptr ? communicator->sum(ceiling.best()) : ceiling.best();
  scale_ = gflops / config.reference_gflops;
  progress.budget_sessions.push_back({progress.wall_seconds, gflops, scale_});
  const double remaining = std::max(0.0, max_time_ - budget_offset_);
  const std::string processes =
      communicator != nullptr ? fmt::format(" (summed over {} processes)", communicator->world_size())
                              : "";
  log << fmt::format(
      "time budget: float32 matmul ceiling {:.0f} GFLOP/s here{} against "
      "training.reference_gflops {:.0f}: a second here counts {:.3f} s of training.max_time, so "
      "the remaining {} take {} of wall-clock time\n",
      gflops, processes, config.reference_gflops, scale_, format_duration(remaining),
      format_duration(remaining / scale_));
  start_ = std::chrono::steady_clock::now();  // the measurement is not training time
}

void TimeBudget::update(TrainingProgress& progress) const {
  const double session =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  progress.wall_seconds = wall_offset_ + session;
  progress.budget_seconds = budget_offset_ + session * scale_;
}

bool TimeBudget::exhausted(const TrainingProgress& progress) const {
  return max_time_ > 0 && progress.budget_seconds >= max_time_;
}

double TimeBudget::fraction(const TrainingProgress& progress) const {
  return max_time_ > 0 ? progress.budget_seconds / max_time_ : 0.0;
}

std::string TimeBudget::stop_reason(const TrainingProgress& progress) const {
  std::string reason = fmt::format("reached training.max_time = {}", format_duration(max_time_));
  if (!progress.budget_sessions.empty()) {
    reason += fmt::format(" of the reference machine ({} of wall-clock time here)",
                          format_duration(progress.wall_seconds));
  }
  return reason;
}

}  // namespace nmtzoo
