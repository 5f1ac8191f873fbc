// SPDX-License-Identifier: MIT
// experiments/measure/adam_step.sh compiles and runs this. Times one Adam step over 10.4M floats
// in 38 tensors (transformer_small's shapes and more):
// LibTorch's torch::optim::Adam against nmtzoo::FusedAdam, alternating A B A B.
#include <torch/torch.h>
#include <chrono>
#include <cstdio>
#include "libtorch/kernels/fused_adam.h"
#include "libtorch/kernels/kernels.h"

static std::vector<at::Tensor> params() {
  torch::manual_seed(1);
  std::vector<at::Tensor> ps;
  ps.push_back(torch::randn({8000, 256}).requires_grad_());  // embeddings
  ps.push_back(torch::randn({8000, 256}).requires_grad_());
  for (int i = 0; i < 12; ++i) {
    ps.push_back(torch::randn({256, 256 * 3}).requires_grad_());
    ps.push_back(torch::randn({256, 256}).requires_grad_());
    ps.push_back(torch::randn({1024, 256}).requires_grad_());
  }
  for (auto& p : ps) p.mutable_grad() = torch::randn_like(p);
  return ps;
}

int main() {
  at::set_num_threads(2);
  int64_t n = 0;
  for (auto& p : params()) n += p.numel();
  std::printf("parameters: %lld floats, 2 threads\n", static_cast<long long>(n));
  for (int round = 0; round < 3; ++round) {
    for (int fused = 0; fused < 2; ++fused) {
      auto ps = params();
      nmtzoo::set_fast_kernels_enabled(fused == 1);
      auto opt = nmtzoo::make_adam(ps, torch::optim::AdamOptions(1e-3).betas({0.9, 0.98}).eps(1e-9),
                                   false);
      for (int i = 0; i < 5; ++i) opt->step();
      const int steps = 40;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i) opt->step();
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
          steps;
      std::printf("round %d %-22s %.2f ms/step  %.1f GB/s (7 float streams)\n", round + 1,
                  fused ? "nmtzoo::FusedAdam" : "torch::optim::Adam", ms, 7.0 * 4 * n / ms / 1e6);
    }
  }
}
