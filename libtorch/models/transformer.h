// SPDX-License-Identifier: MIT
// The Transformer of Vaswani et al. (2017) as an EncoderDecoder.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "libtorch/models/embedding.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/models/transformer_layer.h"
#include "torch_free/archs/options/transformer_options.h"

#include <string>
#include <vector>

namespace nmtzoo {

class TransformerEncoderImpl : public torch::nn::Cloneable<TransformerEncoderImpl> {
 public:
  explicit TransformerEncoderImpl(const TransformerOptions& options);
  void reset() override;
  // x (B, S, E) embedded source; src_pad_mask (B, S) -> (B, S, E)
  Tensor forward(const Tensor& x, const Tensor& src_pad_mask);

  TransformerOptions options;
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};  // pre-LN only: normalises the stack's output
};
TORCH_MODULE(TransformerEncoder);

class TransformerDecoderImpl : public torch::nn::Cloneable<TransformerDecoderImpl> {
 public:
  explicit TransformerDecoderImpl(const TransformerOptions& options);
  void reset() override;
  // x (B, T, E) embedded target; see TransformerDecoderLayerImpl::forward. `caches` has one
  // entry per layer for incremental decoding; `cross_weights`, when given, gets one (B, H, T, S)
  // tensor per layer.
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& causal,
                 const Tensor& memory_pad_mask, std::vector<DecoderLayerCache>* caches = nullptr,
                 std::vector<Tensor>* cross_weights = nullptr);

  TransformerOptions options;
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};  // pre-LN only
};
TORCH_MODULE(TransformerDecoder);

// DecoderState entries: memory, memory_pad_mask and, per decoder layer i, memory_k.i and
// memory_v.i (kSource), self_k.i and self_v.i (kStep).
class TransformerImpl : public EncoderDecoder {
 public:
  explicit TransformerImpl(const TransformerOptions& options);
  void reset();

  DecoderState encode(const Tensor& src_tokens, const Tensor& src_pad_mask) override;
  Tensor decode_step(const Tensor& prev_tokens, DecoderState& state) override;
  Tensor features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                  const Tensor& tgt_in) override;
  Tensor output_layer(const Tensor& features) override;
  OutputProjection output_projection() override;
  int64_t max_positions() const override { return options.max_positions(); }

  TransformerOptions options;
  torch::nn::Embedding src_embed{nullptr};
  torch::nn::Embedding tgt_embed{nullptr};    // null when sharing all: src_embed serves both
  PositionalEncoding src_positions{nullptr};  // null with relative positions
  PositionalEncoding tgt_positions{nullptr};
  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};
  torch::nn::Linear output_proj{nullptr};  // null when tied to the target embedding

 private:
  // Scaled token embeddings (word dropout `word_dropout` on them) plus absolute positions.
  Tensor embed(const Tensor& tokens, torch::nn::Embedding& table, PositionalEncoding& positions,
               int64_t offset, double word_dropout);
  torch::nn::Embedding& target_table() { return tgt_embed ? tgt_embed : src_embed; }
  Tensor encode_memory(const Tensor& src_tokens, const Tensor& src_pad_mask);

  // Each decoder layer's state entry names, made once in reset() rather than at every step.
  struct LayerSlots {
    std::string self_k, self_v, memory_k, memory_v;
  };
  std::vector<LayerSlots> layer_slots_;
};
TORCH_MODULE(Transformer);

}  // namespace nmtzoo
