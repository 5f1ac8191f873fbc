// SPDX-License-Identifier: MIT
// TER's edit count for one hypothesis and one reference, as sacreBLEU's lib_ter.py computes it:
// word shifts searched greedily under Tercom's limits, then the beam edit distance
// (torch_free/metrics/ter_beam_edit_distance.h) of the shifted hypothesis.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace nmtzoo {

struct TerEdits {
  int64_t edits = 0;       // shifts + insertions + deletions + substitutions
  int64_t ref_length = 0;  // reference words
};

// lib_ter.translation_edit_rate: the edits that turn `hyp_words` into `ref_words`. Shifts are
// tried while one lowers the edit distance, at most 1000 candidates per call; an empty reference
// costs one edit per hypothesis word.
TerEdits translation_edit_rate(const std::vector<std::string_view>& hyp_words,
                               const std::vector<std::string_view>& ref_words);

}  // namespace nmtzoo
