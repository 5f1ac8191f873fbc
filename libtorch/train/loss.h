// SPDX-License-Identifier: MIT
// Label-smoothed cross-entropy, apart from the models (fairseq's criterion).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmtzoo {

struct LossSums {
  at::Tensor loss;     // scalar: summed label-smoothed loss (what is minimised)
  at::Tensor nll;      // scalar: summed negative log-likelihood (for perplexity)
  int64_t tokens = 0;  // target tokens summed over; the trainer divides once per update
};

// logits (N, V) of N real target tokens, target (N). With epsilon > 0 the target distribution
// puts 1 - epsilon on the reference and spreads epsilon evenly over the other V - 1 tokens.
LossSums label_smoothed_nll(const at::Tensor& logits, const at::Tensor& target, double epsilon);

// The same sums for logits = features weight^T + bias: features (N, F), weight (V, F), bias (V)
// or undefined. With `bf16` the products run in bfloat16 (training.bf16), the loss in float32.
// On CPU with the kernels on (libtorch/kernels/kernels.h), the projection and the loss are one
// fused node that computes the logits a chunk of rows at a time and never holds all of them;
// elsewhere it is label_smoothed_nll(linear(features, weight, bias)). The two agree to float32
// rounding.
LossSums projected_label_smoothed_nll(const at::Tensor& features, const at::Tensor& weight,
                                      const at::Tensor& bias, const at::Tensor& target,
                                      double epsilon, bool bf16);

}  // namespace nmtzoo
