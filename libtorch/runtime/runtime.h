// SPDX-License-Identifier: MIT
// Process-wide settings every app applies first: thread count, memory reuse, device, and bf16
// autocast. Used by inference and training alike.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "torch_free/config/config.h"

namespace nmtzoo {

// LibTorch's intra-op threads: `threads`, or every core when 0 (LibTorch's own default can be 1).
// Also calls keep_freed_memory_for_reuse() and install_onednn_matmul()
// (libtorch/kernels/onednn_matmul.h). std::invalid_argument naming `option` (--threads,
// training.threads) for more threads than cores.
void configure_threads(int64_t threads, const std::string& option = "--threads");

// Blocks SIGINT and SIGTERM in the calling thread and in every thread it starts afterwards, so
// that no signal handler ever runs on a computing thread (a handler interrupting oneDNN's JIT
// sgemm corrupted the heap; see libtorch/kernels/onednn_matmul.h). Call it before any thread
// starts; then one thread takes the signals with wait_for_stop_signal(), which returns SIGINT or
// SIGTERM.
void block_stop_signals();
int wait_for_stop_signal();
// For an app with no orderly stop that writes with AtomicFile (nmtzoo-translate): blocks the
// stop signals as above and starts the thread that takes them, which removes this process's
// temporary files (torch_free/io/atomic_file.h) and ends the process by the signal received. Call
// it before any thread starts.
void end_on_stop_signal_removing_temporaries();

// Makes glibc malloc keep freed memory, however large, for reuse instead of returning it to the
// system (process-wide; idempotent).
void keep_freed_memory_for_reuse();
// Returns the heap's free memory to the system once (malloc_trim): after building something large
// and temporary, such as an epoch's batches over millions of pairs, which the allocator would
// otherwise keep resident for good.
void release_freed_memory();

// cpu, cuda (an error naming the key when no CUDA device is usable) or auto.
c10::Device resolve_device(DeviceChoice choice, const std::string& where = "training.device");
DeviceChoice parse_device_choice(const std::string& text);  // "cpu" | "cuda" | "auto"

// bfloat16 autocast on CPU for the scope, when `enabled`: matrix products in bf16, reductions and
// normalisations in float32 (LibTorch's CPU autocast policy).
class CpuAutocast {
 public:
  explicit CpuAutocast(bool enabled);
  ~CpuAutocast();
  CpuAutocast(const CpuAutocast&) = delete;
  CpuAutocast& operator=(const CpuAutocast&) = delete;

 private:
  bool enabled_;
};

}  // namespace nmtzoo
