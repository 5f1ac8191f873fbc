// SPDX-License-Identifier: MIT
#include "torch_free/common/cpu_cores.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <thread>

namespace nmtzoo {

int64_t available_cores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    return std::max(1, CPU_COUNT(&allowed));
  }
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

std::string thread_count_problem(int64_t threads) {
  const int64_t cores = available_cores();
  if (threads >= 0 && threads <= cores) return "";
  return fmt::format("must be 0 (every core) to {} (the cores this process may use), got {}", cores,
                     threads);
}

}  // namespace nmtzoo
