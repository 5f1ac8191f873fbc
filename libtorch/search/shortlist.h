// SPDX-License-Identifier: MIT
// A lexical shortlist of the target vocabulary, as Marian's lexical shortlists and CTranslate2's
// vocabulary maps: for each source token, the target tokens that translate it most often, learned
// from the training pairs by IBM Model 1 (Brown et al. 1993), plus the most frequent target
// tokens. A batch is decoded over the union of its sentences' candidates only
// (DecoderState::vocabulary), so the output projection, softmax and top-k shrink from V rows to a
// few hundred.
//
// The file is text, one entry per line, tab-separated, in the tokenizers' pieces (readable, and
// it cannot silently meet other tokenizers: the header carries their fingerprint):
//   nmtzoo-shortlist <tab> 1 <tab> <tokenizer fingerprint>
//   frequent <tab> <target piece> <tab> <count>                  (most frequent first)
//   lexical <tab> <source piece> <tab> <target piece> <tab> <p>  (per source piece, most probable
//   first)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {

struct ShortlistTraining {
  int64_t iterations = 5;         // EM iterations of IBM Model 1
  int64_t candidates = 100;       // target tokens kept per source token ...
  double min_probability = 1e-3;  // ... with at least this p(target | source)
  int64_t frequent = 1000;        // most frequent target tokens kept
};

// Calls its argument once for every training pair (source and target ids, without BOS/EOS).
using PairVisitor = std::function<void(const std::function<void(TokenSpan, TokenSpan)>&)>;

class Shortlist {
 public:
  // IBM Model 1 p(target | source) with a NULL source token, over the pairs `visit` yields (it is
  // called once per EM iteration and twice more). Ids must be below the vocabulary sizes.
  static Shortlist train(const PairVisitor& visit, int64_t source_vocab, int64_t target_vocab,
                         const ShortlistTraining& options = {});

  // Throws std::runtime_error naming the file and line on a bad line, a piece the tokenizers do
  // not have, or a file made for other tokenizers.
  static Shortlist load(const std::string& path, const Tokenizers& tokenizers);
  // Atomically; throws IoError naming the file.
  void save(const std::string& path, const Tokenizers& tokenizers) const;

  // The shortlist of a batch, sorted ids: the special ids 0..3, the `frequent` most frequent
  // target tokens, each source token's `top_k` best candidates, and `extra` (prefix tokens).
  std::vector<int64_t> vocabulary(const std::vector<TokenSpan>& sources, int64_t top_k,
                                  int64_t frequent, const std::vector<int64_t>& extra = {}) const;
  std::vector<int64_t> vocabulary(const std::vector<std::vector<int32_t>>& sources, int64_t top_k,
                                  int64_t frequent, const std::vector<int64_t>& extra = {}) const;

  int64_t target_vocab() const { return target_vocab_; }
  const std::vector<int32_t>& frequent() const { return frequent_; }
  // Candidates of source id `source`, most probable first, with their probabilities.
  const std::vector<std::pair<int32_t, float>>& candidates(int64_t source) const;

 private:
  int64_t target_vocab_ = 0;
  std::vector<int32_t> frequent_;
  std::vector<int64_t> frequency_;  // per target id, in the training targets
  std::vector<std::vector<std::pair<int32_t, float>>> candidates_;  // per source id
};

}  // namespace nmtzoo
