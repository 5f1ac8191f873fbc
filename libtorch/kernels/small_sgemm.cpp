// SPDX-License-Identifier: MIT
#include "libtorch/kernels/small_sgemm.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "libtorch/kernels/avx512.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/onednn_matmul.h"

namespace nmtzoo {
namespace {

#if NMTZOO_HAS_AVX512_PATH
// dst (cols x rows, leading dimension ld_dst) = src (rows x cols, ld_src) transposed, rows and
// cols <= 16: one 16 x 16 transpose in registers (interleave pairs, then pairs of pairs, then
// 128-bit lanes twice), missing rows read as zeros and missing columns never stored.
NMTZOO_AVX512 void transpose_tile(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                                  float* dst, int64_t ld_dst) {
  const __mmask16 col_mask = lanes_mask(cols);
  __m512 r[16], t[16];
  for (int64_t i = 0; i < 16; ++i) {
    r[i] = i < rows ? _mm512_maskz_loadu_ps(col_mask, src + i * ld_src) : _mm512_setzero_ps();
  }
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4 i + c], 128-bit lane L: column 4 L + c of rows 4 i .. 4 i + 3.
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  const __mmask16 row_mask = lanes_mask(rows);
  for (int c = 0; c < 4; ++c) {
    const __m512 low = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44),
                 high = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    const __m512 low2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
    const __m512 high2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    const __m512 out[4] = {
        _mm512_shuffle_f32x4(low, low2, 0x88), _mm512_shuffle_f32x4(low, low2, 0xDD),
        _mm512_shuffle_f32x4(high, high2, 0x88), _mm512_shuffle_f32x4(high, high2, 0xDD)};
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t row = 4 * lane + c;
      if (row < cols) _mm512_mask_storeu_ps(dst + row * ld_dst, row_mask, out[lane]);
    }
  }
}

NMTZOO_AVX512 void transpose_avx512(const float* src, int64_t ld_src, int64_t rows, int64_t cols,
                                    float* dst) {
  // Tiles down src's columns: consecutive tiles write on along the same 16 rows of dst.
  for (int64_t j = 0; j < cols; j += kAvx512Lanes) {
    for (int64_t i = 0; i < rows; i += kAvx512Lanes) {
      transpose_tile(src + i * ld_src + j, ld_src, std::min(kAvx512Lanes, rows - i),
                     std::min(kAvx512Lanes, cols - j), dst + j * rows + i, rows);
    }
  }
}

// Where op(A)[i, p] is: a[i row + p step].
struct LeftOperand {
  const float* a;
  int64_t row, step;
};

// C rows [0, MR), columns [0, 16 NV) (the last vector's lanes masked by `last`) = alpha op(A) B
// over all k, the MR x NV accumulators in registers: per p, NV vectors of B's row times MR
// broadcast elements of op(A).
template <int MR, int NV>
NMTZOO_AVX512 void block(int64_t k, float alpha, LeftOperand a, const float* b, int64_t ldb,
                         __mmask16 last, float* c, int64_t ldc) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    const float* b_row = b + p * ldb;
    __m512 b_vectors[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v) b_vectors[v] = _mm512_loadu_ps(b_row + v * kAvx512Lanes);
    b_vectors[NV - 1] = _mm512_maskz_loadu_ps(last, b_row + (NV - 1) * kAvx512Lanes);
    const float* a_column = a.a + p * a.step;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a_column[r * a.row]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(x, b_vectors[v], acc[r][v]);
    }
  }
  const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v)
      _mm512_storeu_ps(c + r * ldc + v * kAvx512Lanes, _mm512_mul_ps(acc[r][v], scale));
    _mm512_mask_storeu_ps(c + r * ldc + (NV - 1) * kAvx512Lanes, last,
                          _mm512_mul_ps(acc[r][NV - 1], scale));
  }
}

// The last `rows` (< MR) rows of a panel, with a block of exactly that many.
template <int NV, int MR>
NMTZOO_AVX512 void remaining_rows(int64_t rows, int64_t k, float alpha, LeftOperand a,
                                  const float* b, int64_t ldb, __mmask16 last, float* c,
                                  int64_t ldc) {
  if constexpr (MR > 0) {
    if (rows == MR) {
      block<MR, NV>(k, alpha, a, b, ldb, last, c, ldc);
    } else {
      remaining_rows<NV, MR - 1>(rows, k, alpha, a, b, ldb, last, c, ldc);
    }
  }
}

// A panel of C: all m rows, 16 NV columns. Blocks of 6 rows for 3-4 vectors (24 of the 32
// registers accumulate), 8 rows for 1-2.
template <int NV>
NMTZOO_AVX512 void panel(int64_t m, int64_t k, float alpha, LeftOperand a, const float* b,
                         int64_t ldb, __mmask16 last, float* c, int64_t ldc) {
  constexpr int kRows = NV >= 3 ? 6 : 8;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) {
    block<kRows, NV>(k, alpha, {a.a + i * a.row, a.row, a.step}, b, ldb, last, c + i * ldc, ldc);
  }
  remaining_rows<NV, kRows - 1>(m - i, k, alpha, {a.a + i * a.row, a.row, a.step}, b, ldb, last,
                                c + i * ldc, ldc);
}

NMTZOO_AVX512 void multiply(int64_t m, int64_t n, int64_t k, float alpha, LeftOperand a,
                            const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int64_t kPanel = 4 * kAvx512Lanes;
  for (int64_t j = 0; j < n; j += kPanel) {
    const int64_t cols = std::min(kPanel, n - j);
    const int64_t vectors = (cols + kAvx512Lanes - 1) / kAvx512Lanes;
    const __mmask16 last = lanes_mask(cols - (vectors - 1) * kAvx512Lanes);
    switch (vectors) {
      case 1:
        panel<1>(m, k, alpha, a, b + j, ldb, last, c + j, ldc);
        break;
      case 2:
        panel<2>(m, k, alpha, a, b + j, ldb, last, c + j, ldc);
        break;
      case 3:
        panel<3>(m, k, alpha, a, b + j, ldb, last, c + j, ldc);
        break;
      default:
        panel<4>(m, k, alpha, a, b + j, ldb, last, c + j, ldc);
        break;
    }
  }
}
#endif

}  // namespace

void transpose(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst) {
#if NMTZOO_HAS_AVX512_PATH
  if (avx512_available()) {
    transpose_avx512(src, ld_src, rows, cols, dst);
    return;
  }
#endif
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * ld_src + j];
  }
}

at::Tensor contiguous_transpose(const at::Tensor& matrix) {
  if (!fast_kernels_enabled() || matrix.dim() != 2 || matrix.scalar_type() != at::kFloat ||
      !matrix.device().is_cpu() || !matrix.is_contiguous()) {
    return matrix.t().contiguous();
  }
  at::Tensor out = at::empty({matrix.size(1), matrix.size(0)}, matrix.options());
  transpose(matrix.data_ptr<float>(), matrix.size(1), matrix.size(0), matrix.size(1),
            out.data_ptr<float>());
  return out;
}

void small_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 std::vector<float>& scratch) {
#if NMTZOO_HAS_AVX512_PATH
  if (avx512_available()) {
    if (m <= 0 || n <= 0) return;
    if (transpose_b) {
      scratch.resize(static_cast<size_t>(k * n));
      transpose_avx512(b, ldb, n, k, scratch.data());
      b = scratch.data();
      ldb = n;
    }
    const LeftOperand left{a, transpose_a ? 1 : lda, transpose_a ? lda : 1};
    multiply(m, n, k, alpha, left, b, ldb, c, ldc);
    return;
  }
#endif
  (void)scratch;
  onednn_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc);
}

}  // namespace nmtzoo
