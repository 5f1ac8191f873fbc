// SPDX-License-Identifier: MIT
#include "libtorch/train/weight_ema.h"

#include <torch/torch.h>

#include <algorithm>

namespace nmtzoo {

WeightEma::WeightEma(std::vector<at::Tensor> parameters, double decay)
    : parameters_(std::move(parameters)), decay_(decay) {
  torch::NoGradGuard no_grad;
  for (const auto& p : parameters_) average_.push_back(p.detach().clone());
}

double WeightEma::decay_at(double decay, int64_t step) {
  return std::min(decay, (1.0 + static_cast<double>(step)) / (10.0 + static_cast<double>(step)));
}

void WeightEma::update(int64_t step) {
  torch::NoGradGuard no_grad;
  const double weight = 1.0 - decay_at(decay_, step);
  for (size_t i = 0; i < parameters_.size(); ++i) average_[i].lerp_(parameters_[i], weight);
}

void WeightEma::set_average(const std::vector<at::Tensor>& values) {
  TORCH_CHECK(values.size() == average_.size(), "the weight average has ", average_.size(),
              " tensors, but ", values.size(), " were given");
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < values.size(); ++i) average_[i].copy_(values[i]);
}

void WeightEma::exchange() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    at::Tensor training = parameters_[i].detach().clone();
    parameters_[i].copy_(average_[i]);
    average_[i] = std::move(training);
  }
}

WeightEma::Swap::Swap(WeightEma* ema) : ema_(ema) {
  if (ema_ != nullptr) ema_->exchange();
}

WeightEma::Swap::~Swap() {
  if (ema_ != nullptr) ema_->exchange();
}

}  // namespace nmtzoo
