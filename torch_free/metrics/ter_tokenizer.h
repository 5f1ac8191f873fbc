// SPDX-License-Identifier: MIT
// sacreBLEU's TercomTokenizer (sacrebleu/tokenizers/tokenizer_ter.py): TER's options and the
// tokenization they select, on code points with the scanning order of Python's re.sub.
#pragma once

#include <string>
#include <string_view>

namespace nmtzoo {

struct TerOptions {
  bool normalized = false;      // Tercom's normalisation: XML entities, punctuation split off
  bool no_punct = false;        // remove the punctuation . , ? : ; ! " ( )
  bool asian_support = false;   // with normalized: split CJK into characters; with no_punct:
                                // also remove CJK and full-width punctuation
  bool case_sensitive = false;  // otherwise lowercase first (Python's str.lower())
};

// sacreBLEU's TercomTokenizer: the words of `sentence` after the options' processing, joined by
// single spaces.
std::string tokenize_tercom(std::string_view sentence, const TerOptions& options);

}  // namespace nmtzoo
