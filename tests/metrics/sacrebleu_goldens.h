// SPDX-License-Identifier: MIT
// Where the tests find the inputs and goldens made by sacreBLEU (scripts/make_*goldens*.py).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torch_free/io/text_file.h"
#include "torch_free/metrics/text_normalize.h"

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

// A hypothesis per reference with every fifth word dropped: the inputs of the tests that score
// Multi30k's test_2016_flickr against itself with each metric.
inline std::vector<std::string> drop_every_fifth_word(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    std::string kept;
    std::vector<std::string_view> words = split_whitespace(line);
    for (size_t i = 0; i < words.size(); ++i) {
      if ((i + 1) % 5 == 0) continue;
      if (!kept.empty()) kept += ' ';
      kept += words[i];
    }
    out.push_back(kept);
  }
  return out;
}

}  // namespace nmtzoo::testing
