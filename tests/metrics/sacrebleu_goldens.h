// Where the tests find the inputs and goldens made by sacreBLEU (scripts/make_*goldens*.py).
#pragma once

#include <string>
#include <vector>

#include "core/io/text_file.h"
#include "core/metrics/text_normalize.h"

namespace nmtzoo::testing {

inline std::string golden_path(const std::string& name) {
  return std::string(NMTZOO_SOURCE_DIR) + "/tests/data/sacrebleu/" + name;
}

// A stream as sacrebleu.py reads it: each line right-stripped.
inline std::vector<std::string> read_stream(const std::string& name) {
  std::vector<std::string> lines;
  for (const auto& line : read_lines(golden_path(name))) {
    lines.emplace_back(rstrip_whitespace(line));
  }
  return lines;
}

}  // namespace nmtzoo::testing
