// The update's gradient scaling and norm clipping, in one pass over the gradients after the
// norm's.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace nmtzoo {

// Multiplies the parameters' gradients by `scale` (1 / tokens) and, when max_norm > 0 and the
// scaled gradients' total 2-norm exceeds it, by max_norm / (norm + 1e-6): as `mul_(scale)` on
// each then torch::nn::utils::clip_grad_norm_(parameters, max_norm), up to float rounding.
// Returns the scaled gradients' norm before clipping (inf or NaN when a gradient is; the
// gradients are then left as they are). Why not those two: scaling is a pass over every
// gradient, and LibTorch 1.13's clip_grad_norm_ multiplies every gradient by its clamped
// coefficient even when that is 1 — three passes where the norm and one multiply do.
double scale_and_clip_gradients(const std::vector<at::Tensor>& parameters, double scale, double max_norm);

}  // namespace nmtzoo
