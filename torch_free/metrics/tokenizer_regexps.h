// SPDX-License-Identifier: MIT
// Python's re.sub for the single-character patterns of sacreBLEU's tokenizers, and the mteval
// regular expressions that BLEU's 13a and zh tokenizers and TER's Tercom tokenizer all apply. One
// copy serves both metrics, so their tokenizers cannot drift apart.
//
// Each works on bytes (std::string) or on code points (std::u32string). Every class used here is
// ASCII, and UTF-8 continuation bytes are never ASCII, so a byte scan matches a negated class such
// as [^0-9] through a character's last byte exactly when a code point scan matches the character.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {

// re.sub with a literal pattern: the non-overlapping occurrences of `from`, left to right.
template <typename Unit>
void replace_literal(std::basic_string<Unit>& text,
                     std::basic_string_view<typename std::basic_string<Unit>::value_type> from,
                     std::basic_string_view<typename std::basic_string<Unit>::value_type> to) {
  using String = std::basic_string<Unit>;
  String out;
  size_t done = 0;
  for (size_t at = text.find(from); at != String::npos; at = text.find(from, done)) {
    out.append(text, done, at - done);
    out.append(to);
    done = at + from.size();
  }
  if (done == 0) return;
  out.append(text, done, String::npos);
  text.swap(out);
}

// re.sub(r"([class])", r" \1 ", text): a space on each side of every unit in the class.
template <typename Unit, typename Predicate>
void pad_each(std::basic_string<Unit>& text, Predicate in_class) {
  std::basic_string<Unit> out;
  out.reserve(text.size() + text.size() / 2);
  for (Unit c : text) {
    if (in_class(c)) {
      out += Unit(' ');
      out += c;
      out += Unit(' ');
    } else {
      out += c;
    }
  }
  text.swap(out);
}

// re.sub(r"[class]", "", text).
template <typename Unit, typename Predicate>
void erase_each(std::basic_string<Unit>& text, Predicate in_class) {
  text.erase(std::remove_if(text.begin(), text.end(), in_class), text.end());
}

enum class PairSpacing {
  kAfterEach,   // r"\1 \2 "
  kBeforeEach,  // r" \1 \2"
};

// re.sub(r"([first])([second])", replacement, text). After a match the scan resumes behind its
// second unit, which therefore cannot start the next match: "a.." gives "a . .".
template <typename Unit, typename First, typename Second>
void space_pairs(std::basic_string<Unit>& text, First first, Second second, PairSpacing spacing) {
  std::basic_string<Unit> out;
  out.reserve(text.size() + text.size() / 2);
  size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      if (spacing == PairSpacing::kBeforeEach) out += Unit(' ');
      out += text[i];
      out += Unit(' ');
      out += text[i + 1];
      if (spacing == PairSpacing::kAfterEach) out += Unit(' ');
      i += 2;
    } else {
      out += text[i++];
    }
  }
  text.swap(out);
}

// mteval's first class [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * +
// : ; < = > ? @ /. Not in it: the apostrophe, comma, hyphen, period, digits, letters.
template <typename Unit>
bool is_mteval_symbol(Unit c) {
  auto in_range = [c](char first, char last) { return c >= Unit(first) && c <= Unit(last); };
  return in_range('{', '~') || in_range('[', '`') || in_range(' ', '&') || in_range('(', '+') ||
         in_range(':', '@') || c == Unit('/');
}

// mteval's number rules, after the symbols are padded:
//   ([^0-9])([\.,]) -> '\1 \2 '  period and comma unless preceded by a digit
//   ([\.,])([^0-9]) -> ' \1 \2'  period and comma unless followed by a digit
//   ([0-9])(-)      -> '\1 \2 '  dash preceded by a digit
// [0-9] is ASCII digits only.
template <typename Unit>
void space_mteval_numbers(std::basic_string<Unit>& text) {
  auto is_digit = [](Unit c) { return c >= Unit('0') && c <= Unit('9'); };
  auto is_not_digit = [&](Unit c) { return !is_digit(c); };
  auto is_period_or_comma = [](Unit c) { return c == Unit('.') || c == Unit(','); };
  auto is_dash = [](Unit c) { return c == Unit('-'); };
  space_pairs(text, is_not_digit, is_period_or_comma, PairSpacing::kAfterEach);
  space_pairs(text, is_period_or_comma, is_not_digit, PairSpacing::kBeforeEach);
  space_pairs(text, is_digit, is_dash, PairSpacing::kAfterEach);
}

// " ".join(text.split()): the words of `text` separated by single spaces.
inline std::string join_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view word : split_whitespace(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

}  // namespace nmtzoo
