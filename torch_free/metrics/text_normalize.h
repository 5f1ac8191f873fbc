// SPDX-License-Identifier: MIT
// Unicode text helpers for the metrics, with Python 3 `str` semantics so that BLEU and chrF see
// the same characters, words and case as sacreBLEU does. Character data comes from libutf8proc.
//
// Text is UTF-8. Invalid bytes are never dropped: each one is kept as a unit of its own that is
// neither whitespace, punctuation, symbol nor number, and lowercasing leaves it unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nmtzoo {

// Python's str.isspace(): the ASCII whitespace "\t\n\v\f\r", U+001C..U+001F and space, and every
// other code point of category Zs or bidirectional class B, S or WS (U+0085, U+00A0, U+2028, ...).
bool is_python_space(char32_t code_point);
bool is_unicode_punctuation(char32_t code_point);  // general category P* (Pc Pd Ps Pe Pi Pf Po)
bool is_unicode_symbol(char32_t code_point);       // general category S* (Sm Sc Sk So)
bool is_unicode_number(char32_t code_point);       // general category N* (Nd Nl No)

// Code points of `text`; an invalid byte becomes U+FFFD.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(std::u32string_view code_points);

// The bytes of each code point of `text`, in order (views into `text`); an invalid byte is a
// piece of its own. Concatenating the pieces gives `text` back.
std::vector<std::string_view> split_code_points(std::string_view text);

// Python's str.split() without arguments: the maximal runs of non-whitespace (views into `text`).
std::vector<std::string_view> split_whitespace(std::string_view text);

// Python's str.rstrip() without arguments.
std::string_view rstrip_whitespace(std::string_view text);

// Python's str.lower(): full lowercase mapping (U+0130 becomes "i\u0307"), and U+03A3 becomes the
// final sigma U+03C2 at the end of a word (Unicode's Final_Sigma context), as CPython does.
std::string lowercase(std::string_view text);

}  // namespace nmtzoo
