// SPDX-License-Identifier: MIT
// The source and target tokenizers of a run (one shared model when the vocabulary is joint).
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace nmtzoo {

// The languages a model translates into, and the ids put before a source to ask for each: a
// multilingual model's target-language tags (data.directions), nothing for a bilingual model.
struct TargetTags {
  std::map<std::string, std::vector<int32_t>> prefixes;  // target language -> ids before the source
  bool tagged = false;                                   // multilingual: the sources carry tags
  // The ids for `lang` ("" = the model's only target); a std::invalid_argument naming the
  // languages the model translates into when it has no such one, or several and none is given.
  const std::vector<int32_t>& prefix(const std::string& lang) const;
  std::string targets() const;  // "de, en, fr"
};

struct Tokenizers {
  std::shared_ptr<const SentencePiece> src;
  std::shared_ptr<const SentencePiece> tgt;
  TargetTags tags;
  bool joint() const { return src == tgt; }
};

// The same pieces under the same ids (the model files' bytes also hold training paths, so they
// differ between runs that share a vocabulary).
bool same_vocabulary(const SentencePiece& a, const SentencePiece& b);

// Loads the config's tokenizer models; errors name the missing or corrupt file.
Tokenizers load_tokenizers(const RunConfig& config);

// A fingerprint of the tokenizer models (FNV-1a of their bytes, the target's only when it is not
// joint), to detect that a checkpoint meets other tokenizers than it was trained with.
std::string tokenizer_fingerprint(const Tokenizers& tokenizers);

// Loads them, first training any that is missing on the training split (logged to `log`). A
// multilingual run's joint model is trained on every language of its directions, each sentence
// file once, with the target-language tags as pieces of their own.
Tokenizers prepare_tokenizers(const RunConfig& config, std::ostream& log);

// `config`'s target languages and their tags in `src` (none unless the run is multilingual); a
// TokenizerError naming the model when one is missing (trained before data.directions listed it).
TargetTags target_tags(const RunConfig& config, const SentencePiece& src);

}  // namespace nmtzoo
