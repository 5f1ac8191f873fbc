// SPDX-License-Identifier: MIT
#include "torch_free/io/process_stats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nmtzoo {
namespace {

TEST(ProcessStats, ResidentSetGrowsWithTouchedMemoryAndThePeakRemembersIt) {
  const double before = resident_set_mb();
  ASSERT_GT(before, 0);
  {
    std::vector<char> block(size_t{64} << 20);
    std::memset(block.data(), 1, block.size());
    EXPECT_GT(resident_set_mb(), before + 50);
  }
  EXPECT_GE(peak_resident_set_mb(), before + 50);
  EXPECT_GE(peak_resident_set_mb(), resident_set_mb());
}

TEST(ProcessStats, TheProcessStartedBeforeThisTest) {
  const double seconds = seconds_since_process_start();
  EXPECT_GE(seconds, 0.0);
  EXPECT_LT(seconds, 3600.0);
}

}  // namespace
}  // namespace nmtzoo
