// SPDX-License-Identifier: MIT
// sacreBLEU's BLEU tokenizers (sacrebleu/tokenizers/): 13a, intl, char and zh, each reproducing
// its Python original on detokenised text, invalid UTF-8 included.
#pragma once

#include <string>
#include <string_view>

namespace nmtzoo {

enum class BleuTokenizer {
  kNone,  // "none": split on whitespace only
  k13a,   // "13a": mteval-v13a.pl, sacreBLEU's default
  kIntl,  // "intl": mteval-v14.pl --international-tokenization
  kChar,  // "char": every character a token
  kZh,    // "zh": every Chinese character a token, the rest as 13a's regular expressions
};

BleuTokenizer parse_bleu_tokenizer(const std::string& name);  // throws MetricError
std::string to_string(BleuTokenizer tokenizer);               // the sacreBLEU name

// The tokenizers, as sacrebleu/tokenizers/: tokens separated by single spaces, no outer spaces.
std::string tokenize_13a(std::string_view line);
std::string tokenize_intl(std::string_view line);
std::string tokenize_char(std::string_view line);
std::string tokenize_zh(std::string_view line);
std::string tokenize_bleu(std::string_view line, BleuTokenizer tokenizer);

}  // namespace nmtzoo
