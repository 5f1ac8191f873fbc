#include "core/runtime/matmul_ceiling.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "kernels/onednn_matmul.h"

namespace nmtzoo {

double matmul_gflops(bool onednn) {
  using Clock = std::chrono::steady_clock;
  torch::NoGradGuard no_grad;
  const bool was = onednn_matmul_enabled();
  set_onednn_matmul_enabled(onednn);
  auto a = torch::randn({2048, 2048});
  auto b = torch::randn({2048, 2048});
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    auto start = Clock::now();
    auto c = torch::mm(a, b);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  set_onednn_matmul_enabled(was);
  return 2.0 * 2048 * 2048 * 2048 / best / 1e9;
}

void MatmulCeiling::measure() {
  onednn = std::max(onednn, matmul_gflops(true));
  blas = std::max(blas, matmul_gflops(false));
}

}  // namespace nmtzoo
