// SPDX-License-Identifier: MIT
// Learning-rate schedules.
#pragma once

#include <cstdint>

#include "torch_free/config/config.h"

namespace nmtzoo {

// inverse_sqrt: lr * min(step / warmup, sqrt(warmup / step)); with training.lr = 0 the peak is
// d_model^-0.5 * warmup^-0.5, i.e. exactly Vaswani et al.'s d_model^-0.5 * min(step^-0.5,
// step * warmup^-1.5). constant and plateau: linear warmup to lr, then lr times the plateau
// decay factor accumulated in `factor`. linear and cosine: the warmup times a decay from lr to
// min_lr as `budget_fraction` (the used part of the run's budget, 0 to 1) goes from 0 to 1,
// min_lr + (lr - min_lr) * (1 - p) or * (1 + cos(pi p)) / 2. The decay starts at the first update,
// not after the warmup, because a time budget's fraction at the warmup's end is not known ahead
// (Li, Yumer & Ramanan, ICLR 2020, "Budgeted training", decay linearly over the whole budget).
class LearningRateSchedule {
 public:
  LearningRateSchedule(const TrainConfig& config, int64_t d_model);
  // step counts from 1.
  double at(int64_t step, double factor = 1.0, double budget_fraction = 0.0) const;
  double peak() const { return peak_; }

 private:
  LrSchedule kind_;
  double peak_;
  int64_t warmup_;
  double min_lr_;
};

}  // namespace nmtzoo
