// SPDX-License-Identifier: MIT
// The input formats of nmtzoo-translate (and of any program that hands it sentences): plain text,
// one source per line; tsv, "source<TAB>prefix<TAB>constraint<TAB>constraint..." (empty fields
// allowed); jsonl, one object {"src": ..., "target": ..., "prefix": ..., "constraints": [...]} per
// line. A multilingual model's target language is "target", or a tag (<2de>) starting the source.
#pragma once

#include <string>
#include <vector>

namespace nmtzoo {

// One input: the source, and optionally the start the output must have and phrases it must contain
// (with decoding.constraints), all as text.
struct TranslationRequest {
  std::string source;
  std::string prefix;
  std::vector<std::string> constraints;
  std::string target_lang;  // of a multilingual model; "" = decoding.target_lang
};

enum class InputFormat { kText, kTsv, kJsonl };

InputFormat parse_input_format(const std::string& name);  // "text" | "tsv" | "jsonl"

// One input line as a request. Throws std::invalid_argument starting with `where` (file:line)
// that names the bad field.
TranslationRequest parse_request(const std::string& line, InputFormat format,
                                 const std::string& where);

}  // namespace nmtzoo
