// SPDX-License-Identifier: MIT
// BLEU's tokenizers and scores on arbitrary bytes: the first byte picks the options (tokenizer,
// smoothing, lowercase, effective order), the rest is the text. Checked where cheap: the text
// helpers keep every byte; 13a and intl give tokens separated by single spaces; every score is a
// finite percentage; and the text scored against itself gets 100 whenever it has tokens and every
// n-gram order counted has some (they all match). A MetricError, e.g. for a segment whose
// references are all empty, is an expected answer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/bleu.h"
#include "torch_free/metrics/text_normalize.h"

namespace {

using nmtzoo::Bleu;
using nmtzoo::BleuOptions;
using nmtzoo::BleuScore;
using nmtzoo::BleuSmooth;
using nmtzoo::BleuTokenizer;

constexpr BleuTokenizer kTokenizers[] = {BleuTokenizer::kNone, BleuTokenizer::k13a,
                                         BleuTokenizer::kIntl, BleuTokenizer::kChar};
constexpr BleuSmooth kSmoothings[] = {BleuSmooth::kNone, BleuSmooth::kFloor, BleuSmooth::kAddK,
                                      BleuSmooth::kExp};

BleuOptions options_from(uint8_t choice) {
  BleuOptions options;
  options.tokenizer = kTokenizers[choice % 4];
  options.smooth = kSmoothings[(choice / 4) % 4];
  options.lowercase = (choice & 16) != 0;
  options.effective_order = (choice & 32) != 0;
  return options;
}

void check_text_helpers(const std::string& text) {
  std::string rejoined;
  for (std::string_view piece : nmtzoo::split_code_points(text)) rejoined.append(piece);
  NMTZOO_FUZZ_CHECK(rejoined == text, "split_code_points lost or changed bytes");
  if (nmtzoo::find_invalid_utf8(text)) return;
  NMTZOO_FUZZ_CHECK(nmtzoo::encode_utf8(nmtzoo::decode_utf8(text)) == text,
                    "decode_utf8 then encode_utf8 changed valid UTF-8");
  NMTZOO_FUZZ_CHECK(!nmtzoo::find_invalid_utf8(nmtzoo::lowercase(text)),
                    "lowercase made valid UTF-8 invalid");
}

void check_single_spaced(const std::string& tokens, BleuTokenizer tokenizer) {
  std::string single_spaced;
  for (std::string_view word : nmtzoo::split_whitespace(tokens)) {
    if (!single_spaced.empty()) single_spaced.push_back(' ');
    single_spaced.append(word);
  }
  NMTZOO_FUZZ_CHECK(single_spaced == tokens, nmtzoo::to_string(tokenizer) +
                                                 " tokens are not single-spaced: [" + tokens + "]");
}

void check_score(const BleuScore& score, const char* what) {
  const std::string line = std::string(what) + ": " + score.format();
  NMTZOO_FUZZ_CHECK(nmtzoo::fuzz::is_percentage(score.score), line);
  for (double precision : score.precisions) {
    NMTZOO_FUZZ_CHECK(nmtzoo::fuzz::is_percentage(precision), line);
  }
  NMTZOO_FUZZ_CHECK(score.bp >= 0.0 && score.bp <= 1.0, line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_text_helpers(text);
  for (BleuTokenizer tokenizer : kTokenizers) {
    std::string tokens = nmtzoo::tokenize_bleu(text, tokenizer);
    if (tokenizer == BleuTokenizer::k13a || tokenizer == BleuTokenizer::kIntl) {
      check_single_spaced(tokens, tokenizer);
    }
  }

  const Bleu bleu(options_from(data[0]));
  try {
    const BleuScore self = bleu.sentence_score(text, {text});
    check_score(self, "text against itself");
    const size_t tokens = nmtzoo::split_whitespace(bleu.preprocess(text)).size();
    const bool every_order_counted = bleu.options().effective_order ||
                                     bleu.options().smooth == BleuSmooth::kAddK ||
                                     tokens >= static_cast<size_t>(nmtzoo::kBleuMaxOrder);
    if (tokens > 0 && every_order_counted) {
      NMTZOO_FUZZ_CHECK(std::abs(self.score - 100.0) < 1e-9,
                        "text against itself: " + self.format(6, bleu.signature()));
    }
  } catch (const nmtzoo::MetricError&) {
  }
  try {
    const std::string first_half = text.substr(0, text.size() / 2);
    check_score(bleu.sentence_score(first_half, {text, std::string(text.rbegin(), text.rend())}),
                "first half against the text and the text reversed");
  } catch (const nmtzoo::MetricError&) {
  }
  try {
    const std::vector<std::string> lines = nmtzoo::fuzz::split_lines(text);
    check_score(bleu.corpus_score(lines, nmtzoo::fuzz::references_for(lines)),
                "lines against themselves and their reverse order");
  } catch (const nmtzoo::MetricError&) {
  }
  return 0;
}
