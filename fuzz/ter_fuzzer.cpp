// SPDX-License-Identifier: MIT
// TER on arbitrary bytes: the first byte picks the Tercom tokenizer's options (normalized,
// no_punct, asian_support, case_sensitive), the rest is the text, split at its middle into two
// halves that take turns as hypothesis and reference. Checked:
// - the tokenizer gives words joined by single spaces;
// - a word list against itself costs 0 edits;
// - between the halves, both ways round, with h hypothesis and r reference words: the edits lie
//   in [|h - r|, max(h, r)] and ref_length is r. Shifts keep the hypothesis's length, so the
//   length difference remains; the beam's edit distance is at most max(h, r), since a path of
//   min(h, r) diagonal moves always fits the beam; and a shift is taken only when it lowers that
//   distance by at least the one edit it costs. With no words on one side, every word of the
//   other is one edit;
// - TER of a text against itself is 0, and so is TER of a text in ASCII capitals against the
//   text when case-insensitive (lowercasing gives the same bytes);
// - the input's lines against themselves and their reverse order score 0 as a corpus, and every
//   score is finite and >= 0.
// Nothing may throw: lib_ter's "the edit path left the beam" cannot happen (the path above fits
// the beam), and every call has a hypothesis and a reference. Text past 2,000 bytes is cut: the
// shift search is quadratic, and libFuzzer's timeout would fire first.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "torch_free/metrics/ter.h"
#include "torch_free/metrics/text_normalize.h"

namespace {

using nmtzoo::Ter;
using nmtzoo::TerEdits;
using nmtzoo::TerOptions;
using nmtzoo::TerScore;

constexpr size_t kMaxTextBytes = 2000;

TerOptions options_from(uint8_t choice) {
  TerOptions options;
  options.normalized = (choice & 1) != 0;
  options.no_punct = (choice & 2) != 0;
  options.asian_support = (choice & 4) != 0;
  options.case_sensitive = (choice & 8) != 0;
  return options;
}

void check_single_spaced(const std::string& tokens, const Ter& ter) {
  std::string rejoined;
  for (std::string_view word : nmtzoo::split_whitespace(tokens)) {
    if (!rejoined.empty()) rejoined.push_back(' ');
    rejoined.append(word);
  }
  NMTZOO_FUZZ_CHECK(rejoined == tokens,
                    ter.signature() + ": tokens not single-spaced: [" + tokens + "]");
}

std::string counts(const TerEdits& edits, size_t hyp_words, size_t ref_words) {
  return std::to_string(edits.edits) + " edits, ref_length " + std::to_string(edits.ref_length) +
         ", for " + std::to_string(hyp_words) + " hypothesis and " + std::to_string(ref_words) +
         " reference words";
}

void check_edits(const std::vector<std::string_view>& hyp, const std::vector<std::string_view>& ref,
                 const char* what) {
  const TerEdits edits = nmtzoo::translation_edit_rate(hyp, ref);
  const auto h = static_cast<int64_t>(hyp.size());
  const auto r = static_cast<int64_t>(ref.size());
  NMTZOO_FUZZ_CHECK(edits.ref_length == r, what + (": " + counts(edits, hyp.size(), ref.size())));
  NMTZOO_FUZZ_CHECK(edits.edits >= std::abs(h - r) && edits.edits <= std::max(h, r),
                    what + (": " + counts(edits, hyp.size(), ref.size())));
  if (h == 0 || r == 0) {
    NMTZOO_FUZZ_CHECK(edits.edits == std::max(h, r),
                      what + (": " + counts(edits, hyp.size(), ref.size())));
  }
  if (hyp == ref) {
    NMTZOO_FUZZ_CHECK(edits.edits == 0, what + (": " + counts(edits, hyp.size(), ref.size())));
  }
}

void check_score(const TerScore& score, const Ter& ter, const char* what) {
  NMTZOO_FUZZ_CHECK(std::isfinite(score.score) && score.score >= 0.0 && score.num_edits >= 0,
                    std::string(what) + ": " + score.format(6, ter.signature()));
}

void check_zero(const TerScore& score, const Ter& ter, const char* what) {
  check_score(score, ter, what);
  NMTZOO_FUZZ_CHECK(score.score == 0.0 && score.num_edits == 0,
                    std::string(what) + ": " + score.format(6, ter.signature()));
}

std::string ascii_upper(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1,
                         std::min(size - 1, kMaxTextBytes));
  const Ter ter(options_from(data[0]));
  const std::string first = text.substr(0, text.size() / 2);
  const std::string second = text.substr(text.size() / 2);

  // Tokenized whole, then the words as views into these strings.
  const std::vector<std::string> tokenized{ter.preprocess(text), ter.preprocess(first),
                                           ter.preprocess(second)};
  std::vector<std::vector<std::string_view>> words;
  for (const std::string& tokens : tokenized) {
    check_single_spaced(tokens, ter);
    words.push_back(nmtzoo::split_whitespace(tokens));
  }
  for (const auto& list : words) check_edits(list, list, "words against themselves");
  check_edits(words[1], words[2], "first half against the second");
  check_edits(words[2], words[1], "second half against the first");

  check_zero(ter.sentence_score(text, {text}), ter, "text against itself");
  if (!ter.options().case_sensitive) {
    check_zero(ter.sentence_score(ascii_upper(text), {text}), ter,
               "text in ASCII capitals against the text");
  }
  check_score(ter.sentence_score(first, {second, text}), ter,
              "first half against the second and the text");
  check_score(ter.sentence_score(second, {first}), ter, "second half against the first");
  const std::vector<std::string> lines = nmtzoo::fuzz::split_lines(text);
  if (!lines.empty()) {
    check_zero(ter.corpus_score(lines, nmtzoo::fuzz::references_for(lines)), ter,
               "lines against themselves and their reverse order");
  }
  return 0;
}
