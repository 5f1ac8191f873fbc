// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace nmtzoo {

// The cores this process may run on: its CPU affinity (taskset, a container's cpuset), not the
// machine's count, which std::thread::hardware_concurrency() gives with glibc. "All cores"
// settings use it, so a run pinned to one core does not start two threads on it.
int64_t available_cores();

// What is wrong with a thread count where 0 means every core: "" or "must be 0 (every core) to
// N (the cores this process may use), got X". Beyond the cores threads only wait for each
// other: 3,000 made nmtzoo-translate crawl, 10**6 never finished starting.
std::string thread_count_problem(int64_t threads);

}  // namespace nmtzoo
