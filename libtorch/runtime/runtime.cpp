// SPDX-License-Identifier: MIT
#include "libtorch/runtime/runtime.h"

#include <ATen/autocast_mode.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <torch/torch.h>

#include <limits>
#include <thread>

#include "libtorch/kernels/onednn_matmul.h"
#include "torch_free/common/cpu_cores.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {

void configure_threads(int64_t threads, const std::string& option) {
  if (const std::string problem = thread_count_problem(threads); !problem.empty()) {
    throw std::invalid_argument(option + " " + problem);
  }
  torch::set_num_threads(static_cast<int>(threads > 0 ? threads : available_cores()));
  keep_freed_memory_for_reuse();
  install_onednn_matmul();
}

namespace {

sigset_t stop_signal_set() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

}  // namespace

void block_stop_signals() {
  const sigset_t signals = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int wait_for_stop_signal() {
  const sigset_t signals = stop_signal_set();
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  return signal;
}

void end_on_stop_signal_removing_temporaries() {
  block_stop_signals();
  std::thread([] {
    const int signal = wait_for_stop_signal();
    remove_temporary_files_of_this_process();
    // Ended by the signal itself, as without this thread: the default action, unblocked here.
    ::signal(signal, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(signal);
  }).detach();
}

void keep_freed_memory_for_reuse() {
#ifdef __GLIBC__
  // LibTorch's CPU allocator is plain malloc. glibc serves blocks over 32 MB (a step's N x V
  // logits and their gradient) with a fresh mmap and unmaps them on free, so every step paid
  // ~40 ms of page faults per such tensor here. From the heap, and never trimmed, they are reused.
  static const bool once = [] {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
    return true;
  }();
  (void)once;
#endif
}

void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

DeviceChoice parse_device_choice(const std::string& text) {
  if (text == "cpu") return DeviceChoice::kCpu;
  if (text == "cuda") return DeviceChoice::kCuda;
  if (text == "auto") return DeviceChoice::kAuto;
  throw std::runtime_error("device must be cpu, cuda or auto, but got '" + text + "'");
}

c10::Device resolve_device(DeviceChoice choice, const std::string& where) {
  switch (choice) {
    case DeviceChoice::kCpu:
      return c10::Device(c10::kCPU);
    case DeviceChoice::kAuto:
      return torch::cuda::is_available() ? c10::Device(c10::kCUDA) : c10::Device(c10::kCPU);
    case DeviceChoice::kCuda:
      if (!torch::cuda::is_available()) {
        throw std::runtime_error(where +
                                 " is cuda, but this LibTorch sees no CUDA device; use "
                                 "cpu or auto");
      }
      return c10::Device(c10::kCUDA);
  }
  return c10::Device(c10::kCPU);
}

CpuAutocast::CpuAutocast(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  at::autocast::increment_nesting();
}

CpuAutocast::~CpuAutocast() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(false);
}

}  // namespace nmtzoo
