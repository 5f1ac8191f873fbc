// SPDX-License-Identifier: MIT
// An exponential moving average of the weights (Marian's exponential smoothing, fairseq's
// --ema-decay), kept beside the weights training updates. With training.ema_decay set, validation
// and every checkpoint's model weights are the average (so translation, averaging and fine-tuning
// use it), and checkpoints also hold the training weights, from which a resume continues.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace nmtzoo {

class WeightEma {
 public:
  // Starts from the current values of `parameters` (which must outlive this object).
  WeightEma(std::vector<at::Tensor> parameters, double decay);

  // After optimizer update `step` (1-based): average = d * average + (1 - d) * weights, with
  // d = min(decay, (1 + step) / (10 + step)) so the first updates are not dominated by the
  // initialisation (TensorFlow's ExponentialMovingAverage with num_updates).
  void update(int64_t step);
  static double decay_at(double decay, int64_t step);

  const std::vector<at::Tensor>& average() const { return average_; }
  // Sets the average (from a checkpoint); shapes must match the parameters.
  void set_average(const std::vector<at::Tensor>& values);

  // While alive, the parameters hold the average; the training weights come back on destruction.
  class Swap {
   public:
    explicit Swap(WeightEma* ema);  // null: does nothing
    ~Swap();
    Swap(const Swap&) = delete;
    Swap& operator=(const Swap&) = delete;
    // The training weights, set aside while the parameters hold the average.
    const std::vector<at::Tensor>& training_weights() const { return ema_->average_; }

   private:
    WeightEma* ema_;
  };

 private:
  void exchange();  // parameters <-> average, in place

  std::vector<at::Tensor> parameters_;
  std::vector<at::Tensor> average_;
  double decay_;
};

}  // namespace nmtzoo
