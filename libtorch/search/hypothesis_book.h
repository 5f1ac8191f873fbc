// SPDX-License-Identifier: MIT
// The search loop's bookkeeping, on the host (internal to search.cpp): which sentences are alive
// (K rows each, row = block * K + hypothesis), each row's tokens, and each sentence's finished
// hypotheses.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "libtorch/search/search.h"
#include "libtorch/search/search_strategy.h"

namespace nmtzoo {

// The rows of the next step: for each, the row it continues, the token it appends and its score.
struct NextRows {
  std::vector<int64_t> parents;
  std::vector<int64_t> tokens;
  std::vector<double> scores;
  bool sentences_changed = false;  // a sentence finished and left the batch
  // Sentences (batch rows) whose candidates include a NaN or +infinity score; when any, the rest
  // of this struct is not filled and the search must stop.
  std::vector<int64_t> non_finite;
};

class HypothesisBook {
 public:
  HypothesisBook(int64_t batch, int64_t width, const SearchOptions& options,
                 std::vector<int64_t> source_lengths);

  bool empty() const { return alive_.empty(); }
  // The sentence (index into the batch) of each block of K live rows.
  const std::vector<int64_t>& sentences() const { return alive_; }
  std::vector<int64_t> row_sentences() const {
    std::vector<int64_t> rows;
    for (int64_t s : alive_) rows.insert(rows.end(), static_cast<size_t>(width_), s);
    return rows;
  }

  // A per-sentence value (a length limit, a minimum length) for each live row.
  std::vector<int64_t> per_row(const std::vector<int64_t>& per_sentence) const {
    std::vector<int64_t> values;
    for (int64_t s : alive_)
      values.insert(values.end(), static_cast<size_t>(width_), per_sentence[s]);
    return values;
  }

  // Takes a step's candidates (best first per live sentence): those ending in EOS among the first K
  // are finished (up to K per sentence), up to K others continue. A sentence with K finished or
  // no live candidate leaves. `history` (R, t, S), when defined, is each row's attention so far.
  NextRows advance(const StepCandidates& candidates, const SearchStrategy& strategy,
                   const at::Tensor& history);

  // Each sentence's finished hypotheses, best first (complete ones before the others), at most
  // `nbest`.
  std::vector<std::vector<Hypothesis>> results(int64_t nbest);

 private:
  Hypothesis finish(int64_t row, int64_t sentence, double log_prob,
                    const at::Tensor& history) const;

  int64_t width_;
  const SearchOptions& options_;
  std::vector<int64_t> source_lengths_;
  std::vector<std::vector<Hypothesis>> finished_;
  std::vector<int64_t> alive_;  // the sentence of each block of K rows
  std::vector<std::vector<int64_t>> row_tokens_;
};

}  // namespace nmtzoo
