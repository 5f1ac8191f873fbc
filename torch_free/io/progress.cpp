// SPDX-License-Identifier: MIT
#include "torch_free/io/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace nmtzoo {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  auto s = static_cast<int64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{:.1f}s", seconds);
}

ProgressMeter::ProgressMeter(std::ostream& out, std::string what, int64_t total, bool terminal,
                             bool enabled, double interval_seconds)
    : out_(out),
      what_(std::move(what)),
      total_(total),
      terminal_(terminal),
      enabled_(enabled),
      interval_(interval_seconds),
      start_(Clock::now()),
      last_(start_) {}

std::string ProgressMeter::describe(int64_t done, double seconds) const {
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  if (total_ < 0)
    return fmt::format("{} {}, {:.1f}/s, {}", done, what_, rate, format_duration(seconds));
  const std::string eta =
      rate > 0 ? format_duration(static_cast<double>(total_ - done) / rate) : "?";
  return fmt::format(
      "{}/{}{} {} ({:.1f}%), {:.1f}/s, {} elapsed, ETA {}", done, estimated_ ? "~" : "", total_,
      what_, total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0,
      rate, format_duration(seconds), eta);
}

void ProgressMeter::update(int64_t done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (terminal_) {
    if (drawn_ && since_last < 0.25) return;
    std::string bar;
    if (total_ > 0) {
      const auto filled = static_cast<size_t>(
          30.0 * std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)));
      bar = "[" + std::string(filled, '#') + std::string(30 - filled, '.') + "] ";
    }
    out_ << "\r\033[K" << bar << describe(done, seconds) << std::flush;
    drawn_ = true;
  } else {
    if (since_last < interval_) return;
    out_ << "progress: " << describe(done, seconds) << '\n' << std::flush;
  }
  last_ = now;
}

void ProgressMeter::estimate_total(int64_t total) {
  total_ = std::max(total, int64_t{0});
  estimated_ = true;
}

void ProgressMeter::clear() {
  if (!enabled_ || !terminal_ || !drawn_) return;
  out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace nmtzoo
