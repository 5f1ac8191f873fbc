// SPDX-License-Identifier: MIT
#include "libtorch/train/schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nmtzoo {
namespace {
constexpr double kPi = 3.14159265358979323846;  // M_PI is POSIX, not C++17
}  // namespace

LearningRateSchedule::LearningRateSchedule(const TrainConfig& config, int64_t d_model)
    : kind_(config.schedule),
      peak_(config.lr),
      warmup_(config.warmup_steps),
      min_lr_(config.min_lr) {
  if (peak_ <= 0) {
    if (kind_ != LrSchedule::kInverseSqrt) {
      throw std::runtime_error(
          "training.lr must be set (> 0) for the constant, plateau, linear and cosine schedules");
    }
    peak_ = 1.0 / std::sqrt(static_cast<double>(d_model) *
                            static_cast<double>(std::max<int64_t>(1, warmup_)));
  }
}

double LearningRateSchedule::at(int64_t step, double factor, double budget_fraction) const {
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
    case LrSchedule::kLinear:
    case LrSchedule::kCosine: {
      const double p = std::clamp(budget_fraction, 0.0, 1.0);
      const double remaining =
          kind_ == LrSchedule::kLinear ? 1.0 - p : 0.5 * (1.0 + std::cos(kPi * p));
      return warmup * (min_lr_ + (peak_ - min_lr_) * remaining);
    }
  }
  return peak_;
}

}  // namespace nmtzoo
