// SPDX-License-Identifier: MIT
// chrF and chrF++ on arbitrary bytes: the first byte picks the n-gram orders and the flags, the
// second beta, the rest is the text. Checked: every score is a finite percentage, and without
// eps smoothing the text scored against itself gets 100 whenever it has an n-gram (they all match
// and effective-order averaging ignores the orders it lacks). A MetricError, e.g. for a segment
// whose references are all empty, is an expected answer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "torch_free/metrics/chrf.h"
#include "torch_free/metrics/text_normalize.h"

namespace {

using nmtzoo::Chrf;
using nmtzoo::ChrfOptions;
using nmtzoo::ChrfScore;

ChrfOptions options_from(uint8_t orders_and_flags, uint8_t beta) {
  ChrfOptions options;
  options.char_order = orders_and_flags % 7;        // 0..6
  options.word_order = (orders_and_flags / 7) % 3;  // 0..2 (2 = chrF++)
  if (options.char_order + options.word_order == 0) options.char_order = 6;
  options.lowercase = (orders_and_flags & 32) != 0;
  options.whitespace = (orders_and_flags & 64) != 0;
  options.eps_smoothing = (orders_and_flags & 128) != 0;
  options.beta = beta % 4;
  return options;
}

bool has_ngrams(const std::string& text, const ChrfOptions& options) {
  if (!nmtzoo::split_whitespace(text).empty()) return true;  // a character, so a word too
  return options.whitespace && options.char_order > 0 && !text.empty();
}

void check_score(const ChrfScore& score, const Chrf& chrf, const char* what) {
  NMTZOO_FUZZ_CHECK(nmtzoo::fuzz::is_percentage(score.score),
                    std::string(what) + ": " + score.format(6, chrf.signature()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);
  const Chrf chrf(options_from(data[0], data[1]));
  try {
    const ChrfScore self = chrf.sentence_score(text, {text});
    check_score(self, chrf, "text against itself");
    if (!chrf.options().eps_smoothing && has_ngrams(text, chrf.options())) {
      NMTZOO_FUZZ_CHECK(std::abs(self.score - 100.0) < 1e-9,
                        "text against itself: " + self.format(6, chrf.signature()));
    }
  } catch (const nmtzoo::MetricError&) {
  }
  try {
    const std::string first_half = text.substr(0, text.size() / 2);
    check_score(chrf.sentence_score(first_half, {text, std::string(text.rbegin(), text.rend())}),
                chrf, "first half against the text and the text reversed");
  } catch (const nmtzoo::MetricError&) {
  }
  try {
    const std::vector<std::string> lines = nmtzoo::fuzz::split_lines(text);
    check_score(chrf.corpus_score(lines, nmtzoo::fuzz::references_for(lines)), chrf,
                "lines against themselves and their reverse order");
  } catch (const nmtzoo::MetricError&) {
  }
  return 0;
}
