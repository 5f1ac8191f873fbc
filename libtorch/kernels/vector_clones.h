// SPDX-License-Identifier: MIT
// NMTZOO_VECTOR_CLONES before a function with plain loops: GCC and clang compile it once per
// instruction set (AVX-512, AVX2, the baseline) and the loader picks the widest the CPU runs
// (function multiversioning), so the loops are vectorised at the CPU's width while the library
// stays built for the baseline ISA. Elsewhere than x86-64 it is the baseline build alone.
// A loop that sums floats needs `#pragma omp simd reduction(+ : sum)` (the kernels are built with
// OpenMP): without -ffast-math the compiler may not reorder the sum on its own, and leaves the
// loop scalar.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NMTZOO_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NMTZOO_VECTOR_CLONES
#endif
