#include "kernels/kernels.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace nmtzoo {
namespace {

std::atomic<bool>& switch_state() {
  static std::atomic<bool> enabled{[] {
    const char* value = std::getenv("NMTZOO_KERNELS");
    return value == nullptr || std::strcmp(value, "off") != 0;
  }()};
  return enabled;
}

}  // namespace

bool fast_kernels_enabled() { return switch_state().load(std::memory_order_relaxed); }
void set_fast_kernels_enabled(bool enabled) { switch_state() = enabled; }

bool set_flush_denormals(bool flush) {
  if (!fast_kernels_enabled() || !at::globalContext().setFlushDenormal(flush)) return false;
  // Each thread of the parallel region runs at least one chunk.
  at::parallel_for(0, 64 * static_cast<int64_t>(at::get_num_threads()), 1,
                   [flush](int64_t, int64_t) { at::globalContext().setFlushDenormal(flush); });
  return true;
}

}  // namespace nmtzoo
