// SPDX-License-Identifier: MIT
#include "libtorch/runtime/matmul_ceiling.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "libtorch/kernels/onednn_matmul.h"

namespace nmtzoo {

double matmul_gflops(bool onednn) {
  using Clock = std::chrono::steady_clock;
  constexpr int64_t n = 2048;
  torch::NoGradGuard no_grad;
  // oneDNN is called directly rather than through the replaced torch::mm, so the figure is
  // oneDNN's even where the replacement is off (NMTZOO_KERNELS=off, set_onednn_matmul_enabled).
  const bool was = onednn_matmul_enabled();
  set_onednn_matmul_enabled(false);
  auto a = torch::randn({n, n});
  auto b = torch::randn({n, n});
  auto c = torch::empty({n, n});
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    auto start = Clock::now();
    if (onednn) {
      onednn_sgemm(false, false, n, n, n, 1.0f, a.data_ptr<float>(), n, b.data_ptr<float>(), n,
                   0.0f, c.data_ptr<float>(), n);
    } else {
      torch::mm_out(c, a, b);
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  set_onednn_matmul_enabled(was);
  return 2.0 * n * n * n / best / 1e9;
}

void MatmulCeiling::measure() {
  onednn = std::max(onednn, matmul_gflops(true));
  blas = std::max(blas, matmul_gflops(false));
}

}  // namespace nmtzoo
