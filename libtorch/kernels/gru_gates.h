// SPDX-License-Identifier: MIT
// The elementwise part of a GRU step, forward and backward, in one pass over the gates each.
//
// Why: the composition (chunk, two sigmoids, tanh, four products and sums) is ~12 operators per
// step and ~20 in its backward, each a pass over (B, n) or (B, 3n) rows plus the cat that the
// chunks' backward makes. In the RNN recipe's training, the decoder's two cells run it at every
// target step: 21-48 ms less outside the products per update (533-555 -> 507-512 ms, one thread).
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// Whether gru_gates takes these: under autograd (a gradient is wanted: decoding keeps LibTorch's
// operators and their exact outputs), fast kernels on, no autocast, float32 CPU; input_gates and
// hidden_gates (B, 3n), h (B, n), rows contiguous.
bool gru_gates_applies(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                       const at::Tensor& h);

// PyTorch's GRU step from its products (gate order reset, update, new; biases included):
// r = sigmoid(i_r + h_r), z = sigmoid(i_z + h_z), c = tanh(i_n + r * h_n), h' = c + z (h - c).
// Differentiable in all three. sigmoid and tanh are float32 polynomials
// (libtorch/kernels/vector_math.h): equal to the composition up to rounding.
at::Tensor gru_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                     const at::Tensor& h);

}  // namespace nmtzoo
