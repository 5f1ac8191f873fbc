// SPDX-License-Identifier: MIT
// Products of many small matrices (attention scores and contexts).
//
// Why not plain torch::matmul: LibTorch 1.13's CPU bmm, built without MKL as Debian's is,
// multiplies the batch one matrix at a time on one thread, with a select + addmm dispatch per
// matrix; for sentence-sized attention matrices that loop took half of a Transformer training
// step. This makes sure the bmm kernel of libtorch/kernels/onednn_matmul.h is installed, which
// multiplies the matrices in a parallel loop, forward and backward.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// a (..., m, k) or, transposed, (..., k, m); b (..., k, n) or, transposed, (..., n, k); equal
// batch dimensions -> (..., m, n). Differentiable.
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, bool transpose_a = false,
                          bool transpose_b = false);

}  // namespace nmtzoo
