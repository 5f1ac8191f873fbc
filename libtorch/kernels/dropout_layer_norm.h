// SPDX-License-Identifier: MIT
// Post-norm's residual step, layer_norm(residual + dropout(sublayer)), in one pass over memory
// forward and one backward, for CPU float32 residuals (the sublayer float32 or bf16).
//
// Why: eagerly it is a dropout (mask draw, scale), an add, layer norm's statistics and its
// normalisation forward, and backward layer norm's, a mask multiply with a dtype conversion, and
// the add's pass-through: about ten passes over (tokens x d_model) per sublayer, 15 sublayers per
// transformer_small update. Here each row is normalised while in cache, the dropout mask is kept
// as a byte per element, and the backward computes the input gradients and the per-thread
// partial sums of the scale's and shift's gradients in one pass. The masks are those
// chunked_dropout (libtorch/kernels/dropout.h) would draw at the same point, so the fused and the
// unfused path train alike from one seed.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// Whether dropout_add_layer_norm takes these operands: CPU, residual float32 and contiguous or
// not, sublayer float32 or bf16 of the same shape, weight and bias float32 (d), d the last size.
bool dropout_add_layer_norm_applies(const at::Tensor& residual, const at::Tensor& sublayer,
                                    const at::Tensor& weight, const at::Tensor& bias);

// layer_norm(residual + dropout(sublayer, p), weight, bias, eps) over the last dimension, float32.
// p = 0: no dropout. Differentiable in residual, sublayer, weight and bias.
at::Tensor dropout_add_layer_norm(const at::Tensor& residual, const at::Tensor& sublayer, double p,
                                  const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace nmtzoo
