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

// Sets a process-wide switch for one scope, and restores it after.
template <bool (*get)(), void (*set)(bool)>
class ScopedSwitch {
 public:
  explicit ScopedSwitch(bool enabled) : before_(get()) { set(enabled); }
  ~ScopedSwitch() { set(before_); }
  ScopedSwitch(const ScopedSwitch&) = delete;
  ScopedSwitch& operator=(const ScopedSwitch&) = delete;

 private:
  bool before_;
};

// The hand-written kernels all on or all off; restores the selection it found (NMTZOO_KERNELS=products too).
class KernelSwitch {
 public:
  explicit KernelSwitch(bool enabled) : before_(kernel_selection()) { set_fast_kernels_enabled(enabled); }
  ~KernelSwitch() { set_kernel_selection(before_); }
  KernelSwitch(const KernelSwitch&) = delete;
  KernelSwitch& operator=(const KernelSwitch&) = delete;

 private:
  KernelSelection before_;
};
// The kernels' AVX-512 paths on (where the CPU has them) or off.
using Avx512Switch = ScopedSwitch<avx512_available, set_avx512_enabled>;

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
