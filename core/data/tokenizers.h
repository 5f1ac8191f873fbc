// The source and target tokenizers of a run (one shared model when the vocabulary is joint).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "core/config/config.h"
#include "tokenizer/sentencepiece.h"

namespace nmtzoo {

struct Tokenizers {
  std::shared_ptr<const SentencePiece> src;
  std::shared_ptr<const SentencePiece> tgt;
  bool joint() const { return src == tgt; }
};

// Loads the config's tokenizer models; errors name the missing or corrupt file.
Tokenizers load_tokenizers(const RunConfig& config);

// A fingerprint of the tokenizer models (FNV-1a of their bytes, the target's only when it is not
// joint), to detect that a checkpoint meets other tokenizers than it was trained with.
std::string tokenizer_fingerprint(const Tokenizers& tokenizers);

// Loads them, first training any that is missing on the training split (logged to `log`).
Tokenizers prepare_tokenizers(const RunConfig& config, std::ostream& log);

}  // namespace nmtzoo
