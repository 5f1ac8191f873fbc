// SPDX-License-Identifier: MIT
#include "torch_free/metrics/ter.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {

TerStats& TerStats::operator+=(const TerStats& other) {
  edits += other.edits;
  ref_length += other.ref_length;
  return *this;
}

std::string TerScore::format(int width, const std::string& signature) const {
  return format_score_line(name(), score, width, signature, "");
}

Ter::Ter(TerOptions options) : options_(options) {}

std::string Ter::preprocess(std::string_view segment) const {
  return tokenize_tercom(rstrip_whitespace(segment), options_);
}

TerStats Ter::segment_stats(const std::string& hypothesis,
                            const std::vector<std::string>& references) const {
  if (references.empty()) throw MetricError("TER needs at least one reference per segment");
  const std::string hyp = preprocess(hypothesis);
  const std::vector<std::string_view> hyp_words = split_whitespace(hyp);
  int64_t best_edits = std::numeric_limits<int64_t>::max();
  int64_t ref_lengths = 0;
  for (const auto& reference : references) {
    const std::string ref = preprocess(reference);
    TerEdits edits = translation_edit_rate(hyp_words, split_whitespace(ref));
    ref_lengths += edits.ref_length;
    best_edits = std::min(best_edits, edits.edits);
  }
  TerStats stats;
  stats.edits = static_cast<double>(best_edits);
  stats.ref_length = static_cast<double>(ref_lengths) / static_cast<double>(references.size());
  return stats;
}

TerScore Ter::score_from_stats(const TerStats& stats) const {
  TerScore score;
  score.num_edits = static_cast<int64_t>(stats.edits);
  score.ref_length = stats.ref_length;
  if (stats.ref_length > 0) {
    score.score = 100 * (stats.edits / stats.ref_length);
  } else {
    score.score = stats.edits > 0 ? 100.0 : 0.0;  // edits against empty references: 100%
  }
  return score;
}

std::string Ter::signature(int num_refs, bool short_form) const {
  auto yes_no = [](bool value) { return value ? "yes" : "no"; };
  std::string nrefs = num_refs < 0 ? "var" : std::to_string(num_refs);
  return fmt::format(short_form
                         ? "#:{}|c:{}|t:tercom|nr:{}|pn:{}|as:{}|v:{}"
                         : "nrefs:{}|case:{}|tok:tercom|norm:{}|punct:{}|asian:{}|version:{}",
                     nrefs, options_.case_sensitive ? "mixed" : "lc", yes_no(options_.normalized),
                     yes_no(!options_.no_punct), yes_no(options_.asian_support), kSignatureVersion);
}

}  // namespace nmtzoo
