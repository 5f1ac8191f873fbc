// SPDX-License-Identifier: MIT
#include "torch_free/metrics/bleu_tokenizers.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "torch_free/metrics/corpus_metric.h"
#include "torch_free/metrics/text_normalize.h"
#include "torch_free/metrics/tokenizer_regexps.h"

namespace nmtzoo {
namespace {

// tokenizer_zh.py's _UCODE_RANGES, compared as Python compares strings. Two of its bounds are
// typos that Python reads as two-character strings: u'\u20000' is U+2000 followed by '0' and
// u'\u2a6d6' is U+2A6D then '6', so that "range" holds U+2001..U+2A6D (general punctuation,
// currency, arrows, ... as well); likewise u'\u2f800'..u'\u2fa1d' holds U+2F81..U+2FA1.
// Extension B itself (U+20000..) is not in it.
bool is_zh_character(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x3400, 0x4db5}, {0x4e00, 0x9fa5}, {0x9fa6, 0x9fbb}, {0xf900, 0xfa2d}, {0xfa30, 0xfa6a},
      {0xfa70, 0xfad9}, {0x2001, 0x2a6d}, {0x2f81, 0x2fa1}, {0xff00, 0xffef}, {0x2e80, 0x2eff},
      {0x3000, 0x303f}, {0x31c0, 0x31ef}, {0x2f00, 0x2fdf}, {0x2ff0, 0x2fff}, {0x3100, 0x312f},
      {0x31a0, 0x31bf}, {0xfe10, 0xfe1f}, {0xfe30, 0xfe4f}, {0x2600, 0x26ff}, {0x2700, 0x27bf},
      {0x3200, 0x32ff}, {0x3300, 0x33ff},
  };
  return std::any_of(std::begin(kRanges), std::end(kRanges),
                     [c](const auto& range) { return range.first <= c && c <= range.second; });
}

const char* tokenizer_name(BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::kNone:
      return "none";
    case BleuTokenizer::k13a:
      return "13a";
    case BleuTokenizer::kIntl:
      return "intl";
    case BleuTokenizer::kChar:
      return "char";
    case BleuTokenizer::kZh:
      return "zh";
  }
  return "?";
}

// tokenizer_re.py, the regular expressions that 13a and zh share, here on bytes.
std::string tokenize_regexp(std::string_view text) {
  std::string spaced(text);
  pad_each(spaced, is_mteval_symbol<char>);
  space_mteval_numbers(spaced);
  return join_words(spaced);
}

}  // namespace

BleuTokenizer parse_bleu_tokenizer(const std::string& name) {
  for (auto tokenizer : {BleuTokenizer::kNone, BleuTokenizer::k13a, BleuTokenizer::kIntl,
                         BleuTokenizer::kChar, BleuTokenizer::kZh}) {
    if (name == tokenizer_name(tokenizer)) return tokenizer;
  }
  throw MetricError("unknown BLEU tokenizer '" + name + "' (nmtzoo has none, 13a, intl, char, zh)");
}

std::string to_string(BleuTokenizer tokenizer) { return tokenizer_name(tokenizer); }

// tokenizer_13a.py: mteval-v13a's entities and line joins, then the shared regular expressions on
// " {line} ".
std::string tokenize_13a(std::string_view line) {
  std::string text = " ";
  text += line;
  replace_literal(text, "<skipped>", "");
  replace_literal(text, "-\n", "");
  replace_literal(text, "\n", " ");
  replace_literal(text, "&quot;", "\"");
  replace_literal(text, "&amp;", "&");
  replace_literal(text, "&lt;", "<");
  replace_literal(text, "&gt;", ">");
  text.push_back(' ');
  return tokenize_regexp(text);
}

// tokenizer_zh.py: line.strip(), a space on each side of every Chinese character, then the shared
// regular expressions (without 13a's entities and outer spaces).
std::string tokenize_zh(std::string_view line) {
  std::string spaced;
  spaced.reserve(line.size() * 2);
  // An invalid byte is a piece of its own that decodes to U+FFFD: neither space nor Chinese.
  std::vector<std::string_view> pieces = split_code_points(line);
  auto code_point = [&](size_t i) { return decode_utf8(pieces[i]).front(); };
  size_t begin = 0;
  size_t end = pieces.size();
  while (begin < end && is_python_space(code_point(begin))) ++begin;
  while (end > begin && is_python_space(code_point(end - 1))) --end;
  for (size_t i = begin; i < end; ++i) {
    if (is_zh_character(code_point(i))) {
      spaced.push_back(' ');
      spaced.append(pieces[i]);
      spaced.push_back(' ');
    } else {
      spaced.append(pieces[i]);
    }
  }
  return tokenize_regexp(spaced);
}

// tokenizer_intl.py (mteval-v14 international tokenization), on code points.
std::string tokenize_intl(std::string_view line) {
  std::u32string text = decode_utf8(line);
  auto is_not_number = [](char32_t c) { return !is_unicode_number(c); };
  auto is_punct = [](char32_t c) { return is_unicode_punctuation(c); };
  // (\P{N})(\p{P}) -> '\1 \2 ': punctuation preceded by a non-number
  space_pairs(text, is_not_number, is_punct, PairSpacing::kAfterEach);
  // (\p{P})(\P{N}) -> ' \1 \2': punctuation followed by a non-number
  space_pairs(text, is_punct, is_not_number, PairSpacing::kBeforeEach);
  // (\p{S}) -> ' \1 ': every symbol
  pad_each(text, [](char32_t c) { return is_unicode_symbol(c); });
  return join_words(encode_utf8(text));
}

// tokenizer_char.py: " ".join(line) puts a space between all code points; whitespace collapses
// when the n-grams are extracted.
std::string tokenize_char(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (std::string_view piece : split_code_points(line)) {
    if (!out.empty()) out.push_back(' ');
    out.append(piece);
  }
  return out;
}

std::string tokenize_bleu(std::string_view line, BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::kNone:
      return std::string(line);
    case BleuTokenizer::k13a:
      return tokenize_13a(line);
    case BleuTokenizer::kIntl:
      return tokenize_intl(line);
    case BleuTokenizer::kChar:
      return tokenize_char(line);
    case BleuTokenizer::kZh:
      return tokenize_zh(line);
  }
  return std::string(line);
}

}  // namespace nmtzoo
