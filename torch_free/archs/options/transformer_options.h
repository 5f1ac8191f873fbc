// SPDX-License-Identifier: MIT
#pragma once

#include <torch/arg.h>

#include <cstdint>

#include "torch_free/archs/options/choices.h"

namespace nmtzoo {

// Which embedding matrices are one parameter: none, decoder input and output projection, or
// those two and the encoder input as well (needs a joint vocabulary).
enum class EmbeddingSharing { kNone, kDecoder, kAll };

struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t heads) : d_model_(d_model), heads_(heads) {}
  TORCH_ARG(int64_t, d_model);                  // model size E
  TORCH_ARG(int64_t, heads);                    // attention heads, divide E
  TORCH_ARG(int64_t, ffn_dim) = 2048;           // inner size of the feed-forward net
  TORCH_ARG(double, dropout) = 0.1;             // on sublayer outputs
  TORCH_ARG(double, attention_dropout) = 0.0;   // on attention weights
  TORCH_ARG(double, activation_dropout) = 0.0;  // inside the feed-forward net
  TORCH_ARG(Activation, activation) = Activation::kRelu;
  TORCH_ARG(NormPosition, norm) = NormPosition::kPost;
  TORCH_ARG(int64_t, max_relative_positions) = 0;  // self-attention; 0 = none
};

struct TransformerOptions {
  TransformerOptions(int64_t src_vocab, int64_t tgt_vocab)
      : src_vocab_(src_vocab), tgt_vocab_(tgt_vocab) {}
  TORCH_ARG(int64_t, src_vocab);  // source vocabulary size
  TORCH_ARG(int64_t, tgt_vocab);  // target vocabulary size
  TORCH_ARG(int64_t, d_model) = 512;
  TORCH_ARG(int64_t, heads) = 8;
  TORCH_ARG(int64_t, ffn_dim) = 2048;
  TORCH_ARG(int64_t, encoder_layers) = 6;
  TORCH_ARG(int64_t, decoder_layers) = 6;
  TORCH_ARG(double, dropout) = 0.1;
  TORCH_ARG(double, attention_dropout) = 0.0;
  TORCH_ARG(double, activation_dropout) = 0.0;
  TORCH_ARG(double, source_word_dropout) = 0.0;  // whole source token embeddings
  TORCH_ARG(double, target_word_dropout) = 0.0;  // whole decoder input embeddings
  TORCH_ARG(Activation, activation) = Activation::kRelu;
  TORCH_ARG(NormPosition, norm) = NormPosition::kPost;
  TORCH_ARG(PositionEncoding, positions) = PositionEncoding::kSinusoidal;
  TORCH_ARG(int64_t, max_positions) = 1024;         // longest sequence, incl. BOS/EOS
  TORCH_ARG(int64_t, max_relative_positions) = 16;  // positions kRelative: the clip
  TORCH_ARG(EmbeddingSharing, sharing) = EmbeddingSharing::kDecoder;
};

}  // namespace nmtzoo

namespace nmtzoo {

struct PositionalEncodingOptions {
  PositionalEncodingOptions(int64_t max_positions, int64_t dim)
      : max_positions_(max_positions), dim_(dim) {}
  TORCH_ARG(int64_t, max_positions);  // longest sequence
  TORCH_ARG(int64_t, dim);            // embedding size E
  TORCH_ARG(PositionEncoding, kind) = PositionEncoding::kSinusoidal;
};

}  // namespace nmtzoo
