// SPDX-License-Identifier: MIT
// chrF (Popović 2015) and chrF++ (Popović 2017) exactly as sacreBLEU 2.x computes them
// (sacrebleu/metrics/chrf.py): character n-grams of the text without whitespace, optional word
// n-grams with punctuation split off word edges, the best reference per segment, and sacreBLEU's
// effective-order averaging (or chrF++.py's epsilon smoothing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch_free/metrics/corpus_metric.h"

namespace nmtzoo {

struct ChrfOptions {
  int char_order = 6;          // character n-gram orders 1..char_order
  int word_order = 0;          // word n-gram orders 1..word_order; 2 = chrF++
  int beta = 2;                // recall weight of the F-score
  bool lowercase = false;      // case-insensitive (Python's str.lower())
  bool whitespace = false;     // keep whitespace in character n-grams
  bool eps_smoothing = false;  // chrF++.py/NLTK/Moses smoothing instead of effective order
};

// Per order (characters 1..char_order, then words 1..word_order), three numbers: hypothesis
// n-grams (0 when the reference has none of that order), reference n-grams, matches.
using ChrfStats = std::vector<int64_t>;

struct ChrfScore {
  double score = 0.0;  // 0..100
  int char_order = 6;
  int word_order = 0;
  int beta = 2;
  int num_refs = 1;  // references per segment; -1 = it varies

  std::string name() const;  // "chrF2", "chrF2++"
  // "chrF2 = 59.52", or "chrF2|nrefs:1|...|version:2.6.0+nmtzoo = 59.52" with a signature.
  std::string format(int width = 2, const std::string& signature = "") const;
};

// corpus_score, sentence_score and corpus_stats come from CorpusMetric.
class Chrf : public CorpusMetric<Chrf, ChrfStats, ChrfScore> {
 public:
  explicit Chrf(ChrfOptions options = {});

  // Statistics of the reference with the highest F-score (the first one on a tie).
  ChrfStats segment_stats(const std::string& hypothesis,
                          const std::vector<std::string>& references) const;
  // The F-score of summed statistics, with the options' orders and beta.
  ChrfScore score_from_stats(const ChrfStats& stats) const;
  double f_score(const ChrfStats& stats) const;  // 0..100
  double f_score(const double* stats) const;     // the same statistics as Python numbers
  // The same statistics as numpy float32 values (sacreBLEU's bootstrap resampling): precision and
  // recall are float32 quotients.
  double f_score_float32(const float* stats) const;

  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0+nmtzoo"; num_refs -1 = "var".
  std::string signature(int num_refs = 1, bool short_form = false) const;
  const ChrfOptions& options() const { return options_; }

 private:
  ChrfOptions options_;
};

// chrF's word splitter (_remove_punctuation): whitespace-separated words; of a word longer than
// one character, a final ASCII punctuation character, or else an initial one, becomes a word of
// its own ("(hi)" gives "(hi" and ")").
std::vector<std::string> chrf_words(const std::string& text);

}  // namespace nmtzoo
