#include "kernels/kernels.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "kernels/avx512.h"

namespace nmtzoo {
namespace {

bool not_off(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr || std::strcmp(value, "off") != 0;
}

std::atomic<bool>& switch_state() {
  static std::atomic<bool> enabled{not_off("NMTZOO_KERNELS")};
  return enabled;
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

bool fast_kernels_enabled() { return switch_state().load(std::memory_order_relaxed); }
void set_fast_kernels_enabled(bool enabled) { switch_state() = enabled; }

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
