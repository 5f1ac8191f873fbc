// Learning-rate schedules.
#pragma once

#include <cstdint>

#include "core/config/config.h"

namespace nmtzoo {

// inverse_sqrt: lr * min(step / warmup, sqrt(warmup / step)); with training.lr = 0 the peak is
// d_model^-0.5 * warmup^-0.5, i.e. exactly Vaswani et al.'s d_model^-0.5 * min(step^-0.5,
// step * warmup^-1.5). constant and plateau: linear warmup to lr, then lr times the plateau
// decay factor accumulated in `factor`.
class LearningRateSchedule {
 public:
  LearningRateSchedule(const TrainConfig& config, int64_t d_model);
  double at(int64_t step, double factor = 1.0) const;  // step counts from 1
  double peak() const { return peak_; }

 private:
  LrSchedule kind_;
  double peak_;
  int64_t warmup_;
  double min_lr_;
};

}  // namespace nmtzoo
