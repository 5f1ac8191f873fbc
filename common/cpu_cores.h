// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace nmtzoo {

// The cores this process may run on: its CPU affinity (taskset, a container's cpuset), not the
// machine's count, which std::thread::hardware_concurrency() gives with glibc. "All cores"
// settings use it, so a run pinned to one core does not start two threads on it.
int64_t available_cores();

}  // namespace nmtzoo
