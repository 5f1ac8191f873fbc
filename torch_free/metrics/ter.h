// SPDX-License-Identifier: MIT
// TER, translation edit rate (Snover et al. 2006), exactly as sacreBLEU 2.x computes it
// (sacrebleu/metrics/ter.py, lib_ter.py, tokenizers/tokenizer_ter.py): Tercom's tokenizer, word
// shifts searched greedily under Tercom's limits, a beam edit distance around the diagonal, the
// fewest edits over the references divided by the average reference length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torch_free/metrics/corpus_metric.h"
#include "torch_free/metrics/ter_edit_rate.h"
#include "torch_free/metrics/ter_tokenizer.h"

namespace nmtzoo {

// Sufficient statistics of one segment or, summed, of a corpus: sacreBLEU's
// [fewest edits over the references, average reference length].
struct TerStats {
  double edits = 0;
  double ref_length = 0;
  TerStats& operator+=(const TerStats& other);
};

struct TerScore {
  double score = 0.0;  // 100 * edits / ref_length (100 or 0 when ref_length is 0)
  int64_t num_edits = 0;
  double ref_length = 0.0;
  int num_refs = 1;  // references per segment; -1 = it varies

  std::string name() const { return "TER"; }
  // "TER = 59.52", or "TER|nrefs:1|...|version:2.6.0+nmtzoo = 59.52" with a signature.
  std::string format(int width = 2, const std::string& signature = "") const;
};

// corpus_score, sentence_score and corpus_stats come from CorpusMetric. An empty reference is a
// reference of no words and counts in the average reference length.
class Ter : public CorpusMetric<Ter, TerStats, TerScore> {
 public:
  explicit Ter(TerOptions options = {});

  // Right-stripping and tokenization of one segment (TER._preprocess_segment).
  std::string preprocess(std::string_view segment) const;
  TerStats segment_stats(const std::string& hypothesis,
                         const std::vector<std::string>& references) const;
  TerScore score_from_stats(const TerStats& stats) const;

  // "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0+nmtzoo"; num_refs -1 =
  // "var"; `short_form` uses sacreBLEU's abbreviations
  // ("#:1|c:lc|t:tercom|nr:no|pn:yes|as:no|v:2.6.0+nmtzoo").
  std::string signature(int num_refs = 1, bool short_form = false) const;
  const TerOptions& options() const { return options_; }

 private:
  TerOptions options_;
};

}  // namespace nmtzoo
