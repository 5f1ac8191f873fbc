// SPDX-License-Identifier: MIT
#include "libtorch/train/time_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <utility>

#include "libtorch/runtime/matmul_ceiling.h"
#include "libtorch/train/distributed.h"
#include "torch_free/io/progress.h"

namespace nmtzoo {

double measure_matmul_ceiling() {
  MatmulCeiling ceiling;
  ceiling.measure();
  return ceiling.best();
}

TimeBudget::TimeBudget(std::function<double()> ceiling_probe) : probe_(std::move(ceiling_probe)) {}

void TimeBudget::start(const TrainConfig& config, TrainingProgress& progress, std::ostream& log,
                       Communicator* communicator) {
  max_time_ = config.max_time;
  reference_gflops_ = config.reference_gflops;
  start_ = std::chrono::steady_clock::now();
  wall_offset_ = progress.wall_seconds;
  budget_offset_ = progress.budget_seconds;
  scale_ = 1;
  if (!scaled()) return;
  const double gflops = measure_session(progress, communicator);
  const double remaining = std::max(0.0, max_time_ - budget_offset_);
  const std::string processes = communicator != nullptr ? fmt::format(" (summed over {} processes)",
                                                                      communicator->world_size())
                                                        : "";
  log << fmt::format(
      "time budget: float32 matmul ceiling {:.0f} GFLOP/s here{} against "
      "training.reference_gflops {:.0f}: a second here counts {:.3f} s of training.max_time, so "
      "the remaining {} take {} of wall-clock time\n",
      gflops, processes, reference_gflops_, scale_, format_duration(remaining),
      format_duration(remaining / scale_));
}

void TimeBudget::remeasure(TrainingProgress& progress, std::ostream& log,
                           Communicator* communicator) {
  update(progress);  // the stretch so far counts at the scale it was measured with
  if (!scaled()) return;
  wall_offset_ = progress.wall_seconds;
  budget_offset_ = progress.budget_seconds;
  const double was = scale_;
  const double gflops = measure_session(progress, communicator);
  // Measurements of a steady machine differ by a few percent; only a drift is worth a line.
  if (std::abs(scale_ / was - 1) > 0.05) {
    log << fmt::format(
        "time budget: the float32 matmul ceiling now measures {:.0f} GFLOP/s (was {:.0f}): a "
        "second here counts {:.3f} s of training.max_time from now on\n",
        gflops, was * reference_gflops_, scale_);
  }
}

double TimeBudget::measure_session(TrainingProgress& progress, Communicator* communicator) {
  // The machine's ceiling is its faster backend's, as docs/performance.md states its figures. With
  // several processes, all measure at once (sharing cores as they will while training).
  if (communicator != nullptr) communicator->barrier();
  const double here = probe_();
  const double gflops = communicator != nullptr ? communicator->sum(here) : here;
  scale_ = gflops / reference_gflops_;
  progress.budget_sessions.push_back({progress.wall_seconds, gflops, scale_});
  start_ = std::chrono::steady_clock::now();  // the measurement is not training time
  return gflops;
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
