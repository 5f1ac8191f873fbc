// SPDX-License-Identifier: MIT
// The update's gradient scaling and norm clipping: one factor from the gradients' norm, applied
// in one pass or by the optimizer's step.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace nmtzoo {

// The factor every gradient is multiplied by: `scale` (1 / tokens) and, when max_norm > 0 and the
// scaled gradients' total 2-norm exceeds it, max_norm / (norm + 1e-6), as `mul_(scale)` on each
// then torch::nn::utils::clip_grad_norm_(parameters, max_norm) would, up to float rounding.
// `norm` is the scaled gradients' norm before clipping (inf or NaN when a gradient is; 0 without
// gradients). Why not those two: scaling is a pass over every gradient, and LibTorch 1.13's
// clip_grad_norm_ multiplies every gradient by its clamped coefficient even when that is 1 —
// three passes where the norm and one multiply do, and none when the optimizer's step multiplies
// as it reads (libtorch/kernels/fused_adam.h).
struct GradientScaling {
  double norm = 0;
  double factor = 1;
};
GradientScaling gradient_scaling(const std::vector<at::Tensor>& parameters, double scale,
                                 double max_norm);

}  // namespace nmtzoo
