// SPDX-License-Identifier: MIT
// Padded tensors for a batch of sentence pairs.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "torch_free/data/binary_dataset.h"

namespace nmtzoo {

struct TokenizedCorpus;

struct Batch {
  at::Tensor src_tokens;         // (B, S) subword ids + EOS, right-padded with kPadId
  at::Tensor src_pad_mask;       // (B, S) bool, true = padding
  at::Tensor tgt_in;             // (B, T) BOS + subword ids (teacher-forcing input)
  at::Tensor tgt_out;            // (B, T) subword ids + EOS (what the model must predict)
  std::vector<int64_t> indices;  // corpus index of each row
  int64_t src_token_count = 0;   // non-pad source tokens
  int64_t tgt_token_count = 0;   // non-pad target tokens (= loss terms)

  Batch to(const c10::Device& device) const;
};

// Builds a batch on the CPU from `pairs`, the token ids of corpus rows `indices`.
Batch make_batch(const std::vector<PairTokens>& pairs, const std::vector<int64_t>& indices);
Batch make_batch(const TokenizedCorpus& corpus, const std::vector<int64_t>& indices);

// (B, L) right-padded ids; each sequence gets EOS appended and, when asked, BOS prepended.
at::Tensor pad_sequences(const std::vector<TokenSpan>& sequences, bool add_bos, bool add_eos);

}  // namespace nmtzoo
