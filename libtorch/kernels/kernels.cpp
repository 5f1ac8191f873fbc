// SPDX-License-Identifier: MIT
#include "libtorch/kernels/kernels.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "libtorch/kernels/avx512.h"

namespace nmtzoo {
namespace {

bool not_off(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr || std::strcmp(value, "off") != 0;
}

KernelSelection environment_selection() {
  const char* value = std::getenv("NMTZOO_KERNELS");
  const KernelSelection selection = kernel_selection_from(value);
  if (value != nullptr && selection == KernelSelection::all && std::strcmp(value, "on") != 0) {
    // A warning, not an error: the first reader may be a kernel deep inside a parallel region.
    std::fprintf(stderr,
                 "nmtzoo: NMTZOO_KERNELS='%s' is not on, off or products; every kernel stays on\n",
                 value);
  }
  return selection;
}

std::atomic<KernelSelection>& selection_state() {
  static std::atomic<KernelSelection> selection{environment_selection()};
  return selection;
}

std::atomic<bool>& avx512_state() {
#if NMTZOO_HAS_AVX512_PATH
  static std::atomic<bool> enabled{__builtin_cpu_supports("avx512f") && not_off("NMTZOO_AVX512")};
#else
  static std::atomic<bool> enabled{false};
#endif
  return enabled;
}

}  // namespace

KernelSelection kernel_selection_from(const char* value) {
  if (value == nullptr) return KernelSelection::all;
  if (std::strcmp(value, "off") == 0) return KernelSelection::off;
  if (std::strcmp(value, "products") == 0) return KernelSelection::products;
  return KernelSelection::all;
}

KernelSelection kernel_selection() { return selection_state().load(std::memory_order_relaxed); }
void set_kernel_selection(KernelSelection selection) { selection_state() = selection; }

bool fast_kernels_enabled() { return kernel_selection() == KernelSelection::all; }
void set_fast_kernels_enabled(bool enabled) {
  set_kernel_selection(enabled ? KernelSelection::all : KernelSelection::off);
}
bool onednn_products_selected() { return kernel_selection() != KernelSelection::off; }

bool avx512_available() { return avx512_state().load(std::memory_order_relaxed); }
void set_avx512_enabled(bool enabled) {
#if NMTZOO_HAS_AVX512_PATH
  avx512_state() = enabled && __builtin_cpu_supports("avx512f");
#else
  (void)enabled;
#endif
}

bool set_flush_denormals(bool flush) {
  if (!fast_kernels_enabled() || !at::globalContext().setFlushDenormal(flush)) return false;
  // Each thread of the parallel region runs at least one chunk.
  at::parallel_for(0, 64 * static_cast<int64_t>(at::get_num_threads()), 1,
                   [flush](int64_t, int64_t) { at::globalContext().setFlushDenormal(flush); });
  return true;
}

}  // namespace nmtzoo
