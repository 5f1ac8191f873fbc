// SPDX-License-Identifier: MIT
// Adam and AdamW whose step is one pass over memory per parameter, for contiguous float32 CPU
// tensors.
//
// Why: LibTorch 1.13's Adam/AdamW step runs about six eager operators per parameter tensor
// (mul_, add_, mul_, addcmul_, sqrt, div, add_, addcdiv_, plus the weight decay), each a pass
// over the parameter's size in memory, and the step is memory-bound. This reads the parameter,
// its gradient and both moments once and writes them once, vectorized and in parallel chunks.
//
// The classes derive from LibTorch's and keep its parameter state (AdamParamState /
// AdamWParamState: step, exp_avg, exp_avg_sq) and its save/load, so a checkpoint written with
// one loads into the other and training resumes exactly. The math and its float rounding follow
// LibTorch 1.13's operators one by one; the only difference is whether a multiply-add is fused
// (LibTorch's AVX2/AVX-512 kernels use FMA in add_(..., alpha), this file's code is built
// without -mfma), so results agree to about 1e-6 relative, not bitwise.
//
// A parameter is left to LibTorch's own step (bitwise LibTorch's result) when it or its gradient
// or state is not a contiguous float32 CPU tensor, its gradient is sparse, amsgrad is set, or
// fast_kernels_enabled() (libtorch/kernels/kernels.h) is false.
#pragma once

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <memory>
#include <utility>
#include <vector>

namespace nmtzoo {

// An optimizer whose next step() takes the gradients multiplied by a factor, as grad.mul_(factor)
// before it would give them (the same float products), without that pass over every gradient
// (the training step's 1 / tokens and clipping, libtorch/train/gradient_norm.h). Gradients the
// fused kernel reads are left unscaled; those LibTorch's step takes are multiplied in place first.
class ScalesGradientsInStep {
 public:
  virtual ~ScalesGradientsInStep() = default;
  void scale_next_gradients(double factor) { next_factor_ = factor; }

 protected:
  double take_gradient_factor() { return std::exchange(next_factor_, 1.0); }

 private:
  double next_factor_ = 1.0;
};

class FusedAdam : public torch::optim::Adam, public ScalesGradientsInStep {
 public:
  using torch::optim::Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class FusedAdamW : public torch::optim::AdamW, public ScalesGradientsInStep {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

// grad.mul_(factor) for each parameter with a gradient (nothing when factor is 1).
void scale_gradients(const std::vector<at::Tensor>& parameters, double factor);

// Adam (or AdamW when `decoupled_weight_decay`, with the same lr, betas, eps, weight_decay and
// amsgrad): the fused class when fast_kernels_enabled() and every parameter is on the CPU,
// LibTorch's own class otherwise (CUDA parameters always get LibTorch's).
std::unique_ptr<torch::optim::Optimizer> make_adam(std::vector<at::Tensor> parameters,
                                                   const torch::optim::AdamOptions& options,
                                                   bool decoupled_weight_decay);

}  // namespace nmtzoo
