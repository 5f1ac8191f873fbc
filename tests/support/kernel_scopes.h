// SPDX-License-Identifier: MIT
// Scopes for the kernel tests: the hand-written kernels on or off, their AVX-512 paths on or off,
// and LibTorch's thread count; and which kernels' autograd nodes a graph holds.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/function.h>

#include <set>
#include <string>
#include <vector>

#include "libtorch/kernels/kernels.h"

namespace nmtzoo::testing {

// Sets a process-wide setting for one scope, and restores it after.
template <typename T, T (*get)(), void (*set)(T)>
class ScopedSetting {
 public:
  explicit ScopedSetting(T value) : before_(get()) { set(value); }
  ~ScopedSetting() { set(before_); }
  ScopedSetting(const ScopedSetting&) = delete;
  ScopedSetting& operator=(const ScopedSetting&) = delete;

 private:
  T before_;
};

// Which hand-written kernels run (all, the oneDNN products only, none).
using KernelSelectionScope = ScopedSetting<KernelSelection, kernel_selection, set_kernel_selection>;
// The hand-written kernels all on or all off; restores the selection it found.
class KernelSwitch : public KernelSelectionScope {
 public:
  explicit KernelSwitch(bool enabled)
      : KernelSelectionScope(enabled ? KernelSelection::all : KernelSelection::off) {}
};
// The kernels' AVX-512 paths on (where the CPU has them) or off.
using Avx512Switch = ScopedSetting<bool, avx512_available, set_avx512_enabled>;

// Sets LibTorch's intra-op thread count for one scope.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : before_(at::get_num_threads()) {
    at::set_num_threads(threads);
  }
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
