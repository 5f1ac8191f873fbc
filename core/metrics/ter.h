// TER, translation edit rate (Snover et al. 2006), exactly as sacreBLEU 2.x computes it
// (sacrebleu/metrics/ter.py, lib_ter.py, tokenizers/tokenizer_ter.py): Tercom's tokenizer, word
// shifts searched greedily under Tercom's limits, a beam edit distance around the diagonal, the
// fewest edits over the references divided by the average reference length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics/bleu.h"  // MetricError, kSignatureVersion, format_score_line

namespace nmtzoo {

struct TerOptions {
  bool normalized = false;      // Tercom's normalisation: XML entities, punctuation split off
  bool no_punct = false;        // remove the punctuation . , ? : ; ! " ( )
  bool asian_support = false;   // with normalized: split CJK into characters; with no_punct:
                                // also remove CJK and full-width punctuation
  bool case_sensitive = false;  // otherwise lowercase first (Python's str.lower())
};

// sacreBLEU's TercomTokenizer: the words of `sentence` after the options' processing, joined by
// single spaces.
std::string tokenize_tercom(std::string_view sentence, const TerOptions& options);

struct TerEdits {
  int64_t edits = 0;       // shifts + insertions + deletions + substitutions
  int64_t ref_length = 0;  // reference words
};

// lib_ter.translation_edit_rate: the edits that turn `hyp_words` into `ref_words`. Shifts are
// tried while one lowers the edit distance, at most 1000 candidates per call; an empty reference
// costs one edit per hypothesis word.
TerEdits translation_edit_rate(const std::vector<std::string_view>& hyp_words,
                               const std::vector<std::string_view>& ref_words);

// Sufficient statistics of one segment or, summed, of a corpus: sacreBLEU's
// [fewest edits over the references, average reference length].
struct TerStats {
  double edits = 0;
  double ref_length = 0;
  TerStats& operator+=(const TerStats& other);
};

struct TerScore {
  double score = 0.0;      // 100 * edits / ref_length (100 or 0 when ref_length is 0)
  int64_t num_edits = 0;
  double ref_length = 0.0;
  int num_refs = 1;        // references per segment; -1 = it varies

  std::string name() const { return "TER"; }
  // "TER = 59.52", or "TER|nrefs:1|...|version:2.6.0+nmtzoo = 59.52" with a signature.
  std::string format(int width = 2, const std::string& signature = "") const;
};

class Ter {
 public:
  explicit Ter(TerOptions options = {});

  // References as for Bleu::corpus_score: references[r][i]. An empty reference is a reference of
  // no words and counts in the average reference length.
  TerScore corpus_score(const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& references) const;
  TerScore sentence_score(const std::string& hypothesis,
                          const std::vector<std::string>& references) const;

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
