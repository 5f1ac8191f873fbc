// SPDX-License-Identifier: MIT
// For the kernels' source files only: their hand-written AVX-512 paths, built into the
// baseline-ISA library and taken only where avx512_available() (kernels.h); elsewhere the
// kernels' portable code runs.
//
// Why intrinsics and not NMTZOO_VECTOR_CLONES (vector_clones.h): where the arithmetic must be
// exactly that of LibTorch's AVX-512 kernels (fused multiply-adds in the same places, nowhere
// else), or the data movement is not a plain loop (register transposes, register blocking).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// GCC 12's AVX-512 intrinsics (shuffles, sqrt) start from _mm512_undefined_ps(), which it then
// reports as maybe uninitialized where they are inlined (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define NMTZOO_HAS_AVX512_PATH 1
#define NMTZOO_AVX512 __attribute__((target("avx512f")))
#else
#define NMTZOO_HAS_AVX512_PATH 0
#endif

#include <cstdint>

#include "libtorch/kernels/kernels.h"

namespace nmtzoo {

#if NMTZOO_HAS_AVX512_PATH
constexpr int64_t kAvx512Lanes = 16;

// The first `lanes` of a vector (all 16 from 16 on).
NMTZOO_AVX512 inline __mmask16 lanes_mask(int64_t lanes) {
  return lanes >= kAvx512Lanes ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << lanes) - 1);
}
#endif

}  // namespace nmtzoo
