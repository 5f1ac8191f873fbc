// SPDX-License-Identifier: MIT
#include "torch_free/io/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace nmtzoo {
namespace {

TEST(ProgressMeter, LogsPlainLinesOffATerminalAndABarOnOne) {
  std::ostringstream log;
  ProgressMeter plain(log, "sentences", 200, /*terminal=*/false, /*enabled=*/true,
                      /*interval=*/0.0);
  plain.update(50);
  EXPECT_NE(log.str().find("progress: 50/200 sentences (25.0%)"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("ETA"), std::string::npos);
  EXPECT_EQ(log.str().find('\r'), std::string::npos) << "no control characters in a log file";

  std::ostringstream terminal;
  ProgressMeter bar(terminal, "sentences", 200, /*terminal=*/true, /*enabled=*/true);
  bar.update(100);
  EXPECT_NE(terminal.str().find("[###############...............] 100/200"), std::string::npos)
      << terminal.str();
  bar.clear();
  EXPECT_EQ(terminal.str().substr(terminal.str().size() - 4), "\r\033[K");

  std::ostringstream unknown;
  ProgressMeter stream(unknown, "sentences", -1, false, true, 0.0);
  stream.update(7);
  EXPECT_NE(unknown.str().find("7 sentences"), std::string::npos) << unknown.str();

  std::ostringstream quiet;
  ProgressMeter off(quiet, "sentences", 10, true, /*enabled=*/false);
  off.update(5);
  off.clear();
  EXPECT_EQ(quiet.str(), "");
}

TEST(ProgressMeter, ShowsAnEstimatedTotalWithATilde) {
  std::ostringstream log;
  ProgressMeter meter(log, "pairs", -1, /*terminal=*/false, /*enabled=*/true, /*interval=*/0.0);
  meter.estimate_total(4000);
  meter.update(1000);
  EXPECT_NE(log.str().find("1000/~4000 pairs (25.0%)"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("ETA"), std::string::npos) << log.str();
}

TEST(ProgressMeter, FormatsDurations) {
  EXPECT_EQ(format_duration(42.0), "42.0s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
}

}  // namespace
}  // namespace nmtzoo
