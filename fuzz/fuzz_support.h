// SPDX-License-Identifier: MIT
// Shared by the fuzz targets: invariant checks and the line splitting of their inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace nmtzoo::fuzz {

[[noreturn]] inline void fail(const char* condition, const std::string& detail, const char* file,
                              int line) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n%s\n", file, line, condition, detail.c_str());
  std::abort();  // libFuzzer saves the input as a crash; replay_main names the file
}

// The lines of `text`, split at each '\n' (dropped); a final '\n' ends a line, it starts none.
inline std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// A metric score (or precision) as the metrics promise it: finite, in [0, 100] up to rounding.
inline bool is_percentage(double value) {
  return std::isfinite(value) && value >= 0.0 && value <= 100.0 + 1e-9;
}

// Two reference streams for scoring `lines` as a corpus: the lines themselves and the lines in
// reverse order (so each segment has an exact reference and, mostly, a different one).
inline std::vector<std::vector<std::string>> references_for(const std::vector<std::string>& lines) {
  return {lines, {lines.rbegin(), lines.rend()}};
}

}  // namespace nmtzoo::fuzz

// Unlike assert(), active in release builds; `detail` is only built when the check fails.
#define NMTZOO_FUZZ_CHECK(condition, detail)                                          \
  do {                                                                                \
    if (!(condition)) ::nmtzoo::fuzz::fail(#condition, (detail), __FILE__, __LINE__); \
  } while (false)
