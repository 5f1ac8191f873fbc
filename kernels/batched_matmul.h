// Products of many small matrices (attention scores and contexts).
//
// Why not torch::matmul: LibTorch 1.13's CPU bmm, built without MKL as Debian's is, multiplies the
// batch one matrix at a time on one thread, with a select + addmm dispatch per matrix; for
// sentence-sized attention matrices that loop took half of a Transformer training step. This
// calls BLAS sgemm per matrix from a parallel loop instead, forward and backward. Elsewhere (CUDA,
// other dtypes, a LibTorch without an exported sgemm) it falls back to torch::matmul.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// a (..., m, k) or, transposed, (..., k, m); b (..., k, n) or, transposed, (..., n, k); equal
// batch dimensions -> (..., m, n). Differentiable.
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, bool transpose_a = false,
                          bool transpose_b = false);

// Whether the parallel sgemm path is available in this process (for benchmarks); it is used when
// fast_kernels_enabled() too.
bool batched_matmul_uses_blas();

}  // namespace nmtzoo
