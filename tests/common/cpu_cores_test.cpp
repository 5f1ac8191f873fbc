// SPDX-License-Identifier: MIT
#include "torch_free/common/cpu_cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace nmtzoo {
namespace {

TEST(AvailableCores, FollowsTheAffinityOfTheCallingThread) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(available_cores(), CPU_COUNT(&saved));
  EXPECT_LE(available_cores(), static_cast<int64_t>(std::thread::hardware_concurrency()));

  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int64_t pinned = available_cores();
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(pinned, 1);
}

}  // namespace
}  // namespace nmtzoo
