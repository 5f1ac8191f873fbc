#include "core/train/schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nmtzoo {

LearningRateSchedule::LearningRateSchedule(const TrainConfig& config, int64_t d_model)
    : kind_(config.schedule),
      peak_(config.lr),
      warmup_(config.warmup_steps),
      min_lr_(config.min_lr) {
  if (peak_ <= 0) {
    if (kind_ != LrSchedule::kInverseSqrt) {
      throw std::runtime_error("training.lr must be set (> 0) for the constant and plateau schedules");
    }
    peak_ = 1.0 / std::sqrt(static_cast<double>(d_model) * static_cast<double>(std::max<int64_t>(1, warmup_)));
  }
}

double LearningRateSchedule::at(int64_t step, double factor) const {
  const double s = static_cast<double>(std::max<int64_t>(1, step));
  const double w = static_cast<double>(warmup_);
  const double warmup = warmup_ > 0 ? std::min(1.0, s / w) : 1.0;
  switch (kind_) {
    case LrSchedule::kInverseSqrt:
      return warmup_ > 0 ? peak_ * std::min(s / w, std::sqrt(w / s)) : peak_ / std::sqrt(s);
    case LrSchedule::kConstant:
      return peak_ * warmup;
    case LrSchedule::kPlateau:
      return std::max(min_lr_, peak_ * warmup * factor);
  }
  return peak_;
}

}  // namespace nmtzoo
