// SPDX-License-Identifier: MIT
#include "torch_free/config/aliases.h"

namespace nmtzoo {

const std::vector<KeyAlias>& decoding_aliases() {
  static const std::vector<KeyAlias> aliases{
      {"-b,--beam", "decoding.beam"},
      {"-n,--nbest", "decoding.nbest"},
      {"--length-penalty", "decoding.length_penalty"},
      {"--alpha", "decoding.alpha"},
      {"--max-len-a", "decoding.max_len_a"},
      {"--max-len-b", "decoding.max_len_b"},
      {"--min-len", "decoding.min_len"},
      {"--batch-tokens", "decoding.batch_tokens"},
      {"-t,--target-lang", "decoding.target_lang"},
      {"--dtype", "decoding.dtype"},
      {"--shortlist", "decoding.shortlist"},
      {"--bf16", "decoding.bf16", true},
      {"--unk-penalty", "decoding.unk_penalty"},
      {"--coverage-penalty", "decoding.coverage_penalty"},
      {"--sampling", "decoding.sampling", true},
      {"--temperature", "decoding.temperature"},
      {"--top-k", "decoding.top_k"},
      {"--top-p", "decoding.top_p"},
      {"--seed", "decoding.seed"},
      {"--constraints", "decoding.constraints"},
  };
  return aliases;
}

std::string alias_name(const KeyAlias& alias) {
  const auto comma = alias.flags.rfind(',');
  return comma == std::string::npos ? alias.flags : alias.flags.substr(comma + 1);
}

}  // namespace nmtzoo
