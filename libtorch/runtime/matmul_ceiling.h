// SPDX-License-Identifier: MIT
// The machine's float32 matrix-product ceiling: what the bench compares its figures with, and
// what a training run's time budget is scaled by when it runs on another machine than the one
// its training.max_time was stated for.
#pragma once

namespace nmtzoo {

// Best of several 2048^3 float32 products on the current thread count, in GFLOP/s, through
// oneDNN's sgemm or LibTorch's BLAS, each called directly whatever the kernel settings.
double matmul_gflops(bool onednn);

// The ceiling is the faster of the two; the BLAS figure is kept beside it so that a run with
// --matmul blas (LibTorch's own kernels) can be compared with the ceiling of the kernels it used.
struct MatmulCeiling {
  double onednn = 0;
  double blas = 0;
  double best() const { return onednn > blas ? onednn : blas; }
  void measure();  // the best of this and every earlier measurement (the machine drifts)
};

}  // namespace nmtzoo
