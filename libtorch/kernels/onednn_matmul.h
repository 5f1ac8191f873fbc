// SPDX-License-Identifier: MIT
// float32 matrix products on CPU through oneDNN's sgemm instead of LibTorch's BLAS.
//
// Why: Debian 12's LibTorch multiplies through OpenBLAS 0.3.21, which predates this machine's
// CPU (an AMD EPYC with full-width AVX-512) and runs its 256-bit kernels there: 2048^3 `torch::mm`
// reaches ~245 GFLOP/s on 2 threads where oneDNN's JIT sgemm (libdnnl, which LibTorch already
// loads) reaches ~480, and 1.4-2.3x OpenBLAS on every shape of a training step (measured with
// experiments/measure/sgemm.py). Elsewhere oneDNN picks its own best kernel for the CPU it runs on.
//
// install_onednn_matmul() replaces the CPU kernels of aten::mm, aten::addmm and aten::bmm (and of
// mm.out and addmm_, which write into their destination through sgemm's beta) in LibTorch's
// dispatcher, so every product goes through it: nmtzoo's layers, LibTorch's own modules
// (the encoder GRU), and the products autograd's backward formulas compute. Other dtypes, strides
// that are neither row- nor column-major, empty matrices, onednn_products_selected() == false
// (libtorch/kernels/kernels.h) and set_onednn_matmul_enabled(false) go to LibTorch's own CPU
// kernels, unchanged.
//
// Signals: a signal handler that interrupts oneDNN's JIT sgemm on its thread's stack corrupts the
// heap (reproduced with oneDNN 2.6.3 here). nmtzoo's programs therefore never run a handler on a
// computing thread: nmtzoo-train and nmtzoo-serve block SIGINT/SIGTERM and take them with sigwait
// on a thread of their own. A program embedding nmtzoo must do the same.
#pragma once

#include <cstdint>

namespace nmtzoo {

// Idempotent and process-wide; configure_threads() calls it.
void install_onednn_matmul();
bool onednn_matmul_installed();
// On by default; off sends every product to LibTorch's BLAS (benchmarks compare the two).
void set_onednn_matmul_enabled(bool enabled);
bool onednn_matmul_enabled();
// Matrices multiplied by the replaced kernels so far (one per matrix of a bmm), for tests.
int64_t onednn_matmul_products();
// Wall-clock seconds spent in aten::mm, addmm and bmm calls since install_onednn_matmul(), through
// oneDNN or LibTorch's fallback alike (summed over calling threads; two clock reads per call): how
// a benchmark splits a training step into products and everything else, without a profiler.
double matmul_seconds();
// Adds products a kernel ran through onednn_sgemm itself (fused attention) to matmul_seconds().
void add_matmul_seconds(double seconds);

// Row-major C = alpha op(A) op(B) + beta C, as BLAS sgemm with leading dimensions.
void onednn_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc);

}  // namespace nmtzoo
