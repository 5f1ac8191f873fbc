// SPDX-License-Identifier: MIT
// Row-major float32 products small enough that a BLAS call's fixed cost outweighs its arithmetic:
// the attention's per-(sentence, head) products, e.g. 15 x 15 x 64.
//
// Why by hand: oneDNN's sgemm spends ~0.6-0.8 us per call on such a shape (checks, dispatch,
// packing) against ~0.2 us of multiply-adds, and the attention of a transformer_small update
// makes ~70k of them. libxsmm is the library for small products, but Debian ships it as source
// only and its 1.17 kernels take no transposed operand: with the transposed copies q k^T needs,
// it saved ~1% of an update (docs/performance.md). This is its register-blocked broadcast kernel
// (AVX-512, masked column tails), with op(A) read in place either way and op(B) = B^T through a
// transposed copy in the caller's scratch; that transpose also serves larger matrices.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace nmtzoo {

// dst (cols x rows, contiguous) = src (rows x cols, leading dimension ld_src) transposed, in
// 16 x 16 tiles transposed in registers (LibTorch's copy of a transposed view goes element by
// element).
void transpose(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst);
// matrix.t().contiguous(), through transpose() for a row-major float32 CPU matrix with the fast
// kernels on (1.7-2.1x LibTorch's copy at 8000 x 256 and 256 x 1024).
at::Tensor contiguous_transpose(const at::Tensor& matrix);

// Row-major C = alpha op(A) op(B) (beta 0: C is overwritten), as BLAS sgemm with leading
// dimensions. A transposed B is first copied into `scratch` (k x n). Without avx512_available()
// (kernels.h), onednn_sgemm.
void small_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 std::vector<float>& scratch);

}  // namespace nmtzoo
