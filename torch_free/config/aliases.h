// SPDX-License-Identifier: MIT
// Command-line spellings of schema keys (Marian's aliases.cpp): a flag such as --beam is another
// name for decoding.beam, so no app declares an option the schema already declares, and the
// value goes through the schema's parser and range check like a YAML value.
#pragma once

#include <string>
#include <vector>

namespace nmtzoo {

struct KeyAlias {
  std::string flags;       // CLI11 spelling: "-b,--beam"
  std::string key;         // the dotted schema key
  bool is_switch = false;  // a flag without a value that sets a boolean key to true
};

// The decoding keys' aliases, as nmtzoo-translate (and the coming server) accept them.
const std::vector<KeyAlias>& decoding_aliases();

// The longest spelling of an alias's flags ("--beam"), for messages.
std::string alias_name(const KeyAlias& alias);

}  // namespace nmtzoo
