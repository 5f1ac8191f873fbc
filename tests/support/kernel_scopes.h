// Scopes for the kernel tests: the hand-written kernels on or off, and LibTorch's thread count.
#pragma once

#include <ATen/Parallel.h>

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

}  // namespace nmtzoo::testing
