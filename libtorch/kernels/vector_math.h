// SPDX-License-Identifier: MIT
// Elementwise math that GCC vectorises inside NMTZOO_VECTOR_CLONES loops without -ffast-math
// (std::exp does not: glibc declares its vector variants only under -ffast-math), shared by the
// kernels that need a softmax.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace nmtzoo {

// e^x for x <= 0 (a logit minus its row's maximum): x = n ln 2 + r, |r| <= ln 2 / 2, e^r by
// Cephes' expf polynomial, 2^n from the exponent bits. n is rounded by adding and subtracting
// 1.5 * 2^23, as std::floor keeps GCC from vectorising the loop without -ffast-math. Below -87
// (e^x < 1.7e-38, under float's normal range) it returns 0, as flushed denormals would be.
inline float exp_nonpositive(float x) {
  const float clamped = std::max(x, -87.0f);
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;  // ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t exponent = (static_cast<int32_t>(n) + 127) << 23;
  return x < -87.0f ? 0.0f : p * __builtin_bit_cast(float, exponent);
}

// out[0..n) = e^(row - max) (out may be row itself), for a row whose maximum is max; returns the
// sum of out.
inline float exp_shifted(const float* row, float max, int64_t n, float* out) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    const float e = exp_nonpositive(row[j] - max);
    out[j] = e;
    sum += e;
  }
  return sum;
}

// tanh(x) = sign(x) (1 - e) / (1 + e), e = e^(-2|x|) <= 1; absolute error ~1e-7 (relative error
// grows only where |x| < 1e-3, where tanh(x) itself is that small).
inline float tanh_by_exp(float x) {
  const float e = exp_nonpositive(-2.0f * std::fabs(x));
  const float t = (1.0f - e) / (1.0f + e);
  return x < 0.0f ? -t : t;
}

// 1 / (1 + e^-x) through e = e^(-|x|) <= 1, never overflowing: 1 / (1 + e) for x >= 0, e / (1 + e)
// below.
inline float sigmoid_by_exp(float x) {
  const float e = exp_nonpositive(-std::fabs(x));
  const float s = 1.0f / (1.0f + e);
  return x < 0.0f ? e * s : s;
}

}  // namespace nmtzoo
