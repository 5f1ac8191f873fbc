// SPDX-License-Identifier: MIT
// Dropout for contiguous float32 CPU tensors.
//
// Why: LibTorch 1.13's CPU bernoulli_ draws every element from a scalar Mersenne Twister under a
// lock (about 6 ms per million elements here, 5% of a Transformer step). This draws from a
// counter-based generator (splitmix64) per chunk of 4,096 elements in parallel. One seed per call
// comes from LibTorch's default generator, so manual_seed and checkpointed RNG state reproduce
// the masks exactly, whatever the thread count.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// Whether chunked_dropout handles `x` with probability `p` (CPU float32, 0 < p < 1).
bool chunked_dropout_applies(const at::Tensor& x, double p);
// Zeroes each element with probability p and scales the rest by 1 / (1 - p). Differentiable.
at::Tensor chunked_dropout(const at::Tensor& x, double p);

}  // namespace nmtzoo
