// Scopes for the kernel tests: the hand-written kernels on or off, their AVX-512 paths on or off,
// and LibTorch's thread count; and which kernels' autograd nodes a graph holds.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/function.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace nmtzoo::testing {

// Switches the hand-written kernels on or off for one scope.
class KernelSwitch {
 public:
  explicit KernelSwitch(bool enabled) : before_(fast_kernels_enabled()) { set_fast_kernels_enabled(enabled); }
  ~KernelSwitch() { set_fast_kernels_enabled(before_); }
  KernelSwitch(const KernelSwitch&) = delete;
  KernelSwitch& operator=(const KernelSwitch&) = delete;

 private:
  bool before_;
};

// Switches the kernels' AVX-512 paths on (where the CPU has them) or off for one scope.
class Avx512Switch {
 public:
  explicit Avx512Switch(bool enabled) : before_(avx512_available()) { set_avx512_enabled(enabled); }
  ~Avx512Switch() { set_avx512_enabled(before_); }
  Avx512Switch(const Avx512Switch&) = delete;
  Avx512Switch& operator=(const Avx512Switch&) = delete;

 private:
  bool before_;
};

// Sets LibTorch's intra-op thread count for one scope.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : before_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ThreadCount() { at::set_num_threads(before_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int before_;
};

// The names of every node of the autograd graph behind `root` ("nmtzoo::..." for the kernels').
inline std::set<std::string> graph_nodes(const at::Tensor& root) {
  std::set<std::string> names;
  std::set<torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> pending{root.grad_fn().get()};
  while (!pending.empty()) {
    torch::autograd::Node* node = pending.back();
    pending.pop_back();
    if (node == nullptr || !seen.insert(node).second) continue;
    names.insert(node->name());
    for (const auto& edge : node->next_edges()) pending.push_back(edge.function.get());
  }
  return names;
}

}  // namespace nmtzoo::testing
