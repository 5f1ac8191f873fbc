// SPDX-License-Identifier: MIT
// Progress of a long job on stderr: on a terminal a bar redrawn in place (at most 4 times a
// second) with the rate and ETA; otherwise (a log file, a pipe) a plain line every `interval`
// seconds, so hours of work are never silent.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace nmtzoo {

// "42.0s", "3m05s", "1h02m".
std::string format_duration(double seconds);

class ProgressMeter {
 public:
  // `what`: the unit counted ("sentences"); `total` < 0 when unknown (stdin). `terminal`: draw a
  // bar (usually isatty(stderr)); `enabled` false prints nothing.
  ProgressMeter(std::ostream& out, std::string what, int64_t total, bool terminal, bool enabled,
                double interval_seconds = 30.0);
  // `done` so far (monotonic).
  void update(int64_t done);
  // Replaces the total with an estimate (e.g. from bytes read), shown with a "~".
  void estimate_total(int64_t total);
  // Erases the bar (before other output, and at the end).
  void clear();

 private:
  std::string describe(int64_t done, double seconds) const;

  std::ostream& out_;
  std::string what_;
  int64_t total_;
  bool estimated_ = false;
  bool terminal_;
  bool enabled_;
  double interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  bool drawn_ = false;
};

}  // namespace nmtzoo
