// SPDX-License-Identifier: MIT
#include "torch_free/metrics/ter_edit_rate.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "torch_free/metrics/ter_beam_edit_distance.h"

namespace nmtzoo {
namespace {

using lib_ter::BeamEditDistance;
using lib_ter::EditOp;
using lib_ter::WordIds;

constexpr int64_t kMaxShiftSize = 10;          // words in a shifted block
constexpr int64_t kMaxShiftDist = 50;          // |hypothesis - reference position| of a block
constexpr int64_t kMaxShiftCandidates = 1000;  // shifts scored per sentence pair, all rounds

// lib_ter.trace_to_alignment of the flipped trace: for each reference word, the position of the
// hypothesis word it is aligned with or follows (-1: before the first); and prefix sums of the
// error flags of hypothesis and reference words.
struct Alignment {
  std::vector<int64_t> hyp_position;
  std::vector<int64_t> hyp_errors_before;  // hyp_errors_before[k]: errors among words 0..k-1
  std::vector<int64_t> ref_errors_before;

  int64_t hyp_errors(int64_t start, int64_t length) const {
    return hyp_errors_before[static_cast<size_t>(start + length)] -
           hyp_errors_before[static_cast<size_t>(start)];
  }
  int64_t ref_errors(int64_t start, int64_t length) const {
    return ref_errors_before[static_cast<size_t>(start + length)] -
           ref_errors_before[static_cast<size_t>(start)];
  }
};

Alignment align_trace(const std::vector<EditOp>& trace) {
  Alignment alignment;
  alignment.hyp_errors_before.push_back(0);
  alignment.ref_errors_before.push_back(0);
  int64_t hyp_position = -1;
  auto add_hyp_word = [&](int64_t error) {
    ++hyp_position;
    alignment.hyp_errors_before.push_back(alignment.hyp_errors_before.back() + error);
  };
  auto add_ref_word = [&](int64_t error) {
    alignment.hyp_position.push_back(hyp_position);
    alignment.ref_errors_before.push_back(alignment.ref_errors_before.back() + error);
  };
  for (EditOp op : trace) {
    switch (op) {
      case EditOp::kNop:
      case EditOp::kSubstitute: {
        int64_t error = op == EditOp::kSubstitute ? 1 : 0;
        add_hyp_word(error);
        add_ref_word(error);
        break;
      }
      case EditOp::kDelete:  // flipped: an insertion into the reference
        add_hyp_word(1);
        break;
      case EditOp::kInsert:  // flipped: a deletion from the reference
        add_ref_word(1);
        break;
      case EditOp::kUndefined:
        break;
    }
  }
  return alignment;
}

// lib_ter._perform_shift: `words` with the block [start, start + length) moved before position
// `target`, Python's clamping slices included.
void perform_shift(const WordIds& words, int64_t start, int64_t length, int64_t target,
                   WordIds* shifted) {
  const auto size = static_cast<int64_t>(words.size());
  shifted->clear();
  auto append = [&](int64_t begin, int64_t end) {
    begin = std::min(begin, size);
    end = std::min(end, size);
    if (begin < end) shifted->insert(shifted->end(), words.begin() + begin, words.begin() + end);
  };
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, size);
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, size);
  } else {  // "shift within the shifted string", as lib_ter.py slices it
    append(0, start);
    append(start + length, length + target);
    append(start, start + length);
    append(length + target, size);
  }
}

// lib_ter._shift: scores every shift of a hypothesis block onto an equal reference block (Tercom's
// filters, up to kMaxShiftCandidates in all) and writes the best to *best_words. Returns its gain
// in edit distance, 0 when there is no candidate.
int64_t best_shift(const WordIds& words, const WordIds& ref, BeamEditDistance& edit_distance,
                   int64_t* checked_candidates, WordIds* best_words) {
  std::vector<EditOp> trace;
  const int64_t score = edit_distance(words, &trace);
  const Alignment alignment = align_trace(trace);
  const auto hyp_length = static_cast<int64_t>(words.size());
  const auto ref_length = static_cast<int64_t>(ref.size());

  // Tercom's ranking: highest gain, then longest block, earliest block, earliest target.
  bool found = false;
  std::array<int64_t, 4> best_rank{};
  WordIds candidate;
  for (int64_t start_h = 0; start_h < hyp_length; ++start_h) {
    const int64_t first_r = std::max<int64_t>(0, start_h - kMaxShiftDist);
    const int64_t last_r = std::min(ref_length - 1, start_h + kMaxShiftDist);
    for (int64_t start_r = first_r; start_r <= last_r; ++start_r) {
      // _find_shifted_pairs: every length of the common run, 1 to kMaxShiftSize.
      for (int64_t length = 1; length <= kMaxShiftSize && start_h + length <= hyp_length &&
                               start_r + length <= ref_length &&
                               words[static_cast<size_t>(start_h + length - 1)] ==
                                   ref[static_cast<size_t>(start_r + length - 1)];
           ++length) {
        // Shift only a block with an error onto a reference block with an error, and not
        // within itself.
        if (alignment.hyp_errors(start_h, length) == 0) continue;
        if (alignment.ref_errors(start_r, length) == 0) continue;
        const int64_t aligned = alignment.hyp_position[static_cast<size_t>(start_r)];
        if (start_h <= aligned && aligned < start_h + length) continue;

        int64_t previous_target = -1;
        for (int64_t offset = -1; offset < length; ++offset) {
          const int64_t r = start_r + offset;
          if (r >= ref_length) break;
          // Before the hypothesis word aligned with reference word r (lib_ter.py inserts before
          // where Tercom inserts after).
          const int64_t target = r < 0 ? 0 : alignment.hyp_position[static_cast<size_t>(r)] + 1;
          if (target == previous_target) continue;
          previous_target = target;
          perform_shift(words, start_h, length, target, &candidate);
          const std::array<int64_t, 4> rank = {score - edit_distance(candidate), length, -start_h,
                                               -target};
          ++*checked_candidates;
          // An equal rank means the same shift, hence the same words: the first one stays.
          if (!found || rank > best_rank) {
            found = true;
            best_rank = rank;
            best_words->swap(candidate);
          }
        }
        // The caller stops at the limit, dropping this round's shift: the rest would not count.
        if (*checked_candidates >= kMaxShiftCandidates) return found ? best_rank[0] : 0;
      }
    }
  }
  return found ? best_rank[0] : 0;
}

TerEdits edit_rate_of_ids(const WordIds& hyp, const WordIds& ref) {
  if (ref.empty()) return {static_cast<int64_t>(hyp.size()), 0};
  BeamEditDistance edit_distance(ref, hyp.size());
  WordIds words = hyp;
  WordIds shifted;
  int64_t shifts = 0;
  int64_t checked_candidates = 0;
  while (true) {
    int64_t gain = best_shift(words, ref, edit_distance, &checked_candidates, &shifted);
    // Reaching the candidate limit ends the search, and drops the shift found in that round.
    if (checked_candidates >= kMaxShiftCandidates || gain <= 0) break;
    ++shifts;
    words.swap(shifted);
  }
  return {shifts + edit_distance(words), static_cast<int64_t>(ref.size())};
}

}  // namespace

TerEdits translation_edit_rate(const std::vector<std::string_view>& hyp_words,
                               const std::vector<std::string_view>& ref_words) {
  std::unordered_map<std::string_view, int32_t> word_ids;
  auto to_ids = [&](const std::vector<std::string_view>& words) {
    WordIds ids;
    ids.reserve(words.size());
    for (std::string_view word : words) {
      ids.push_back(word_ids.emplace(word, static_cast<int32_t>(word_ids.size())).first->second);
    }
    return ids;
  };
  WordIds hyp = to_ids(hyp_words);
  WordIds ref = to_ids(ref_words);
  return edit_rate_of_ids(hyp, ref);
}

}  // namespace nmtzoo
