// SPDX-License-Identifier: MIT
#include "torch_free/metrics/ter_tokenizer.h"

#include <vector>

#include "torch_free/metrics/text_normalize.h"
#include "torch_free/metrics/tokenizer_regexps.h"

namespace nmtzoo {
namespace {

// An invalid UTF-8 byte b travels as the lone surrogate U+DC00 + b, as under Python's
// surrogateescape: it matches only the negated class [^0-9], and is written back unchanged.
constexpr char32_t kEscapedByteBase = 0xDC00;

bool is_escaped_byte(char32_t code_point) { return code_point >= 0xDC80 && code_point <= 0xDCFF; }

std::u32string decode_keeping_invalid_bytes(std::string_view text) {
  std::u32string code_points = decode_utf8(text);  // one per piece below
  std::vector<std::string_view> pieces = split_code_points(text);
  for (size_t i = 0; i < pieces.size(); ++i) {
    auto byte = static_cast<unsigned char>(pieces[i][0]);
    if (pieces[i].size() == 1 && byte >= 0x80) code_points[i] = kEscapedByteBase + byte;
  }
  return code_points;
}

std::string encode_keeping_invalid_bytes(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  size_t run_start = 0;
  for (size_t i = 0; i <= code_points.size(); ++i) {
    bool escaped = i < code_points.size() && is_escaped_byte(code_points[i]);
    if (i == code_points.size() || escaped) {
      out += encode_utf8(code_points.substr(run_start, i - run_start));
      if (escaped) out.push_back(static_cast<char>(code_points[i] - kEscapedByteBase));
      run_start = i + 1;
    }
  }
  return out;
}

bool in_range(char32_t c, char32_t first, char32_t last) { return c >= first && c <= last; }

// ASIAN_PUNCT and FULL_WIDTH_PUNCT.
bool is_cjk_punctuation(char32_t c) {
  switch (c) {
    case 0x3001:
    case 0x3002:
    case 0x30FB:
    case 0xFF0E:
    case 0xFF0C:
    case 0xFF1F:
    case 0xFF1A:
    case 0xFF1B:
    case 0xFF01:
    case 0xFF02:
    case 0xFF08:
    case 0xFF09:
      return true;
    default:
      return in_range(c, 0x3008, 0x3011) || in_range(c, 0x3014, 0x301F) ||
             in_range(c, 0xFF61, 0xFF65);
  }
}

// The blocks _normalize_asian splits into characters. "Enclosed CJK Letters and Months" is
// written \u3200-\u3f22 there, not ...-\u32ff; harmless: the other blocks cover
// \u3300-\u3f22.
bool is_cjk_split(char32_t c) {
  return in_range(c, 0x4E00, 0x9FFF) || in_range(c, 0x3400, 0x4DBF) ||
         in_range(c, 0x31C0, 0x31EF) || in_range(c, 0x2E80, 0x2EFF) ||
         in_range(c, 0x3300, 0x33FF) || in_range(c, 0xF900, 0xFAFF) ||
         in_range(c, 0xFE30, 0xFE4F) || in_range(c, 0x3200, 0x3F22);
}

// _remove_punct's [\.,\?:;!\"\(\)].
bool is_removed_punctuation(char32_t c) {
  return c == U'.' || c == U',' || c == U'?' || c == U':' || c == U';' || c == U'!' || c == U'"' ||
         c == U'(' || c == U')';
}

// _normalize_general_and_western.
void normalize_western(std::u32string& text) {
  replace_literal(text, U"\n-", U"");  // end-of-line hyphenation
  replace_literal(text, U"\n", U" ");
  replace_literal(text, U"&quot;", U"\"");  // in this order: "&amp;lt;" becomes "<"
  replace_literal(text, U"&amp;", U"&");
  replace_literal(text, U"&lt;", U"<");
  replace_literal(text, U"&gt;", U">");
  text = U" " + text + U" ";
  pad_each(text, is_mteval_symbol<char32_t>);
  replace_literal(text, U"'s ", U" 's ");
  // r"'s$" -> r" 's" never matches: the text now ends with the padding space, and `$` matches
  // only at the end or before a final "\n".
  space_mteval_numbers(text);
}

// _normalize_asian. Its substitutions only put spaces around single characters, which the final
// split removes again, so one pass over the union of their classes gives the same words.
// Its three Hiragana/Katakana/Katakana Phonetic Extensions substitutions,
// (^|^[kana])([kana]+)(?=$|^[kana]), can never match: without MULTILINE `^` holds only at
// position 0, so a match must start there and its run of kana reach the end; but
// _normalize_asian runs only after _normalize_general_and_western, whose result starts with a
// space. None of the three is reproduced.
void normalize_asian(std::u32string& text) {
  pad_each(text, [](char32_t c) { return is_cjk_split(c) || is_cjk_punctuation(c); });
}

}  // namespace

std::string tokenize_tercom(std::string_view sentence, const TerOptions& options) {
  std::string text = options.case_sensitive ? std::string(sentence) : lowercase(sentence);
  if (options.normalized || options.no_punct) {
    std::u32string code_points = decode_keeping_invalid_bytes(text);
    if (options.normalized) {
      normalize_western(code_points);
      if (options.asian_support) normalize_asian(code_points);
    }
    if (options.no_punct) {
      erase_each(code_points, [&](char32_t c) {
        return is_removed_punctuation(c) || (options.asian_support && is_cjk_punctuation(c));
      });
    }
    text = encode_keeping_invalid_bytes(code_points);
  }
  return join_words(text);
}

}  // namespace nmtzoo
