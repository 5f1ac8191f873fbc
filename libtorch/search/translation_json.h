// SPDX-License-Identifier: MIT
// How a translation is written out, in one place for every caller: as JSON (nmtzoo-translate
// --format jsonl, nmtzoo-serve's /v1/translate, the bindings) or as plain lines (the text, or
// Moses-style n-best lines), with word alignments and attention when asked.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "libtorch/search/translation_pipeline.h"

namespace nmtzoo {

class SentencePiece;

enum class AlignmentOutput {
  kNone,
  kHard,  // Pharaoh word pairs "0-0 1-2" (alignment.h)
  kSoft,  // the attention matrix over the source pieces, in JSON only
};

struct TranslationJsonOptions {
  bool nbest = false;  // add "nbest": every hypothesis, best first
  bool tokens = true;  // each hypothesis's target pieces
  AlignmentOutput alignment = AlignmentOutput::kNone;
  bool attention_svg = false;  // each hypothesis's attention as an SVG heatmap (the web page)
};

// {"text", "score", "log_prob", "tokens", ["alignment" | "attention"], ["constraints_met": false],
//  ["attention_svg"], ["truncated": true], ["warnings": [...]], ["nbest": [{the same per
// hypothesis}]]}: the best hypothesis's fields at the top. An empty input line, or an output the
// length limits left empty, has "score": null and no log_prob. "warnings" says what a limit did
// (min_len_warning, empty_output_warning).
nlohmann::json translation_json(const Translation& translation, const SentencePiece& target,
                                const TranslationJsonOptions& options);

// Hypothesis k's attention (its tokens and EOS x the source pieces and EOS) as rows, or empty
// when it was not recorded.
std::vector<std::vector<float>> attention_rows(const Translation& translation, size_t k);

// Hypothesis k's attention as an SVG heatmap titled `title`; "" when it was not recorded.
std::string attention_heatmap(const Translation& translation, size_t k, const SentencePiece& target,
                              const std::string& title);

// Output lines of nmtzoo-translate: plain (the best text; with n-best, "i ||| text ||| score"
// lines, 0-based i; hard alignments after a tab or as " ||| a") or jsonl ({"line": n} and
// translation_json, one object per input line).
class TranslationWriter {
 public:
  TranslationWriter(bool jsonl, TranslationJsonOptions options, const SentencePiece& target)
      : jsonl_(jsonl), options_(options), target_(target) {}
  void write(std::ostream& out, const std::vector<Translation>& translations,
             int64_t first_line) const;

 private:
  void write_plain(std::ostream& out, const Translation& t, int64_t line) const;
  bool jsonl_;
  TranslationJsonOptions options_;
  const SentencePiece& target_;
};

}  // namespace nmtzoo
