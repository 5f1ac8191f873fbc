// SPDX-License-Identifier: MIT
#pragma once

#include <torch/arg.h>

#include <cstdint>
#include <optional>

#include "torch_free/archs/options/attention_options.h"
#include "torch_free/archs/options/transformer_options.h"

namespace nmtzoo {

struct RnnSeq2SeqOptions {
  RnnSeq2SeqOptions(int64_t src_vocab, int64_t tgt_vocab)
      : src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {}
  TORCH_ARG(int64_t, src_vocab);          // source vocabulary size
  TORCH_ARG(int64_t, tgt_vocab);          // target vocabulary size
  TORCH_ARG(int64_t, emb_dim) = 620;      // word embedding size m
  TORCH_ARG(int64_t, hidden_dim) = 1000;  // recurrent state size n
  TORCH_ARG(RnnCell, cell) = RnnCell::kGru;
  TORCH_ARG(int64_t, encoder_layers) = 1;        // stacked bidirectional layers
  TORCH_ARG(int64_t, decoder_layers) = 1;        // stacked decoder cells
  TORCH_ARG(double, dropout) = 0.0;              // embeddings, between layers, readout
  TORCH_ARG(double, source_word_dropout) = 0.0;  // whole source token embeddings
  TORCH_ARG(double, target_word_dropout) = 0.0;  // whole decoder input embeddings
  // nullopt: no attention, the encoder summary is the context at every step (Cho et al. 2014)
  TORCH_ARG(std::optional<AttentionScore>, attention) = AttentionScore::kAdditive;
  TORCH_ARG(int64_t, attention_dim) = 1000;  // additive scoring's hidden size
  TORCH_ARG(AttentionQuery, attention_query) = AttentionQuery::kPrevious;
  TORCH_ARG(Readout, readout) = Readout::kMaxout;
  TORCH_ARG(int64_t, readout_dim) = 500;  // size after maxout / tanh layer
  TORCH_ARG(EmbeddingSharing, sharing) = EmbeddingSharing::kNone;
  TORCH_ARG(int64_t, max_positions) = 1024;  // longest sequence accepted
};

}  // namespace nmtzoo
