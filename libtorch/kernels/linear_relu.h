// SPDX-License-Identifier: MIT
// relu(x w^T + b), the first layer of the Transformer's feed-forward net, in training: the bias
// and the ReLU in one pass after the product, and in the backward the ReLU's mask and the bias's
// gradient in one pass, with the weight's gradient multiplied in oneDNN's faster orientation.
//
// Why: the composition (addmm, relu_, then autograd's threshold_backward, a column sum for the
// bias and mm(grad^T, x)) passes over the (tokens x ffn_dim) activations five times, and oneDNN
// multiplies w's gradient as grad^T x, a (1024 x 256) result over 3,000 rows, at 114-117
// GFLOP/s against 155-156 for its transpose x^T grad (one thread, measured in the same run).
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// Whether linear_relu takes these: under autograd (decoding keeps LibTorch's operators and their
// exact outputs), fast kernels on, no autocast, float32 CPU, x (..., in) contiguous, weight
// (out, in), bias (out).
bool linear_relu_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// max(x w^T + b, 0), (..., out). Differentiable in x, weight and bias. The bias is added after the
// product rather than inside it: equal to the composition up to float32 rounding.
at::Tensor linear_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace nmtzoo
