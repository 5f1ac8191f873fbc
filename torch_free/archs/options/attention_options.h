// SPDX-License-Identifier: MIT
#pragma once

#include <torch/arg.h>

#include <cstdint>

#include "torch_free/archs/options/choices.h"

namespace nmtzoo {

struct AttentionOptions {
  AttentionOptions(int64_t query_dim, int64_t key_dim) : query_dim_(query_dim), key_dim_(key_dim) {}
  TORCH_ARG(int64_t, query_dim);  // size of a query (decoder state)
  TORCH_ARG(int64_t, key_dim);    // size of a key (encoder annotation)
  TORCH_ARG(AttentionScore, score) = AttentionScore::kAdditive;
  TORCH_ARG(int64_t, hidden_dim) = 0;  // additive only; 0 = key_dim
};

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  TORCH_ARG(int64_t, embed_dim);           // model size E, divisible by heads
  TORCH_ARG(int64_t, num_heads);           // number of heads
  TORCH_ARG(double, dropout) = 0.0;        // on the attention weights
  TORCH_ARG(bool, self_attention) = true;  // q, k, v from one input (fused)
  // Shaw et al. (2018): learned key and value embeddings of the distance j - i from query i to
  // key j, clipped to [-this, this]; 0 = none.
  TORCH_ARG(int64_t, max_relative_positions) = 0;
};

}  // namespace nmtzoo
