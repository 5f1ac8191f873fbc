#include "kernels/kernels.h"

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

}  // namespace nmtzoo
