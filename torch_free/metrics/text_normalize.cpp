// SPDX-License-Identifier: MIT
#include "torch_free/metrics/text_normalize.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

namespace nmtzoo {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the valid UTF-8 sequence at the start of `text` and its code point in `*code_point`,
// or 0 when the first byte does not start one.
size_t next_code_point(std::string_view text, char32_t* code_point) {
  auto byte = static_cast<unsigned char>(text[0]);
  if (byte < 0x80) {
    *code_point = byte;
    return 1;
  }
  utf8proc_int32_t value = 0;
  utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                        static_cast<utf8proc_ssize_t>(text.size()), &value);
  if (n <= 0) return 0;
  *code_point = static_cast<char32_t>(value);
  return static_cast<size_t>(n);
}

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
    return;
  }
  utf8proc_uint8_t buffer[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(code_point), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

utf8proc_category_t category(char32_t code_point) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(code_point));
}

// Unicode's Cased property (Lowercase, Uppercase or Lt), as CPython's _PyUnicode_IsCased. It is
// approximated by the categories Lu, Ll and Lt plus every code point with a case mapping; that
// leaves out only the few Other_Lowercase/Other_Uppercase characters without a mapping and outside
// Case_Ignorable (U+00AA, U+00BA, U+1F130..U+1F189), which matter only next to a capital sigma.
bool is_cased(char32_t code_point) {
  auto c = static_cast<utf8proc_int32_t>(code_point);
  utf8proc_category_t cat = utf8proc_category(c);
  if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT) {
    return true;
  }
  return utf8proc_tolower(c) != c || utf8proc_toupper(c) != c || utf8proc_totitle(c) != c;
}

// Unicode's Case_Ignorable property, as CPython's _PyUnicode_IsCaseIgnorable: categories Mn, Me,
// Cf, Lm and Sk, plus the code points whose Word_Break is MidLetter, MidNumLet or Single_Quote.
// utf8proc has no word-break data, so those 17 are listed (WordBreakProperty.txt, Unicode 15).
bool is_case_ignorable(char32_t code_point) {
  switch (category(code_point)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  static constexpr char32_t kWordBreakMid[] = {0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F,
                                               0x05F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13,
                                               0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A};
  return std::find(std::begin(kWordBreakMid), std::end(kWordBreakMid), code_point) !=
         std::end(kWordBreakMid);
}

// CPython's handle_capital_sigma: U+03A3 at index i lowercases to the final sigma when a cased
// letter precedes it and none follows it, skipping case-ignorable code points on both sides.
bool is_final_sigma(const std::u32string& text, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  if (j == 0 || !is_cased(text[j - 1])) return false;
  size_t k = i + 1;
  while (k < text.size() && is_case_ignorable(text[k])) ++k;
  return k == text.size() || !is_cased(text[k]);
}

}  // namespace

bool is_python_space(char32_t code_point) {
  if (code_point < 0x80) {
    return (code_point >= 0x09 && code_point <= 0x0D) || (code_point >= 0x1C && code_point <= 0x20);
  }
  const utf8proc_property_t* property =
      utf8proc_get_property(static_cast<utf8proc_int32_t>(code_point));
  return property->category == UTF8PROC_CATEGORY_ZS ||
         property->bidi_class == UTF8PROC_BIDI_CLASS_B ||
         property->bidi_class == UTF8PROC_BIDI_CLASS_S ||
         property->bidi_class == UTF8PROC_BIDI_CLASS_WS;
}

bool is_unicode_punctuation(char32_t code_point) {
  utf8proc_category_t cat = category(code_point);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_unicode_symbol(char32_t code_point) {
  utf8proc_category_t cat = category(code_point);
  return cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO;
}

bool is_unicode_number(char32_t code_point) {
  utf8proc_category_t cat = category(code_point);
  return cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) {
    char32_t code_point = 0;
    size_t n = next_code_point(text.substr(offset), &code_point);
    out.push_back(n == 0 ? kReplacement : code_point);
    offset += n == 0 ? 1 : n;
  }
  return out;
}

std::string encode_utf8(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t code_point : code_points) append_utf8(out, code_point);
  return out;
}

std::vector<std::string_view> split_code_points(std::string_view text) {
  std::vector<std::string_view> pieces;
  pieces.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) {
    char32_t code_point = 0;
    size_t n = next_code_point(text.substr(offset), &code_point);
    if (n == 0) n = 1;
    pieces.push_back(text.substr(offset, n));
    offset += n;
  }
  return pieces;
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> words;
  size_t offset = 0;
  size_t word_start = std::string_view::npos;
  while (offset < text.size()) {
    char32_t code_point = 0;
    size_t n = next_code_point(text.substr(offset), &code_point);
    bool space = n != 0 && is_python_space(code_point);
    if (n == 0) n = 1;
    if (space && word_start != std::string_view::npos) {
      words.push_back(text.substr(word_start, offset - word_start));
      word_start = std::string_view::npos;
    } else if (!space && word_start == std::string_view::npos) {
      word_start = offset;
    }
    offset += n;
  }
  if (word_start != std::string_view::npos) words.push_back(text.substr(word_start));
  return words;
}

std::string_view rstrip_whitespace(std::string_view text) {
  size_t end = 0;  // end of the last non-whitespace code point
  size_t offset = 0;
  while (offset < text.size()) {
    char32_t code_point = 0;
    size_t n = next_code_point(text.substr(offset), &code_point);
    bool space = n != 0 && is_python_space(code_point);
    offset += n == 0 ? 1 : n;
    if (!space) end = offset;
  }
  return text.substr(0, end);
}

std::string lowercase(std::string_view text) {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  std::string out(text);
  if (ascii) {
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  // Decode keeping invalid bytes apart: they are copied through unchanged.
  std::u32string code_points;
  std::vector<size_t> offsets;  // byte offset of each code point; invalid bytes get kReplacement
  std::vector<bool> invalid;
  code_points.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) {
    char32_t code_point = 0;
    size_t n = next_code_point(text.substr(offset), &code_point);
    offsets.push_back(offset);
    invalid.push_back(n == 0);
    code_points.push_back(n == 0 ? kReplacement : code_point);
    offset += n == 0 ? 1 : n;
  }
  out.clear();
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < code_points.size(); ++i) {
    char32_t c = code_points[i];
    if (invalid[i]) {
      out.push_back(text[offsets[i]]);
    } else if (c == 0x0130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: SpecialCasing.txt
      out.push_back('i');
      append_utf8(out, 0x0307);
    } else if (c == 0x03A3) {  // GREEK CAPITAL LETTER SIGMA
      append_utf8(out, is_final_sigma(code_points, i) ? 0x03C2 : 0x03C3);
    } else {
      append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

}  // namespace nmtzoo
