// SPDX-License-Identifier: MIT
// Transformer encoder and decoder layers (Vaswani et al. 2017), children named as in
// torch.nn.TransformerEncoderLayer / TransformerDecoderLayer (self_attn, multihead_attn, linear1,
// linear2, norm1..3) so exported weights map one-to-one.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <string>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/models/multihead_attention.h"
#include "torch_free/archs/options/transformer_options.h"

namespace nmtzoo {

using at::Tensor;

// The position-wise feed-forward net and sublayer wiring shared by both layer kinds.
class TransformerSublayers {
 protected:
  explicit TransformerSublayers(const TransformerLayerOptions& options) : options(options) {}
  // Post-LN: norm(x + dropout(f(x))); pre-LN: x + dropout(f(norm(x))).
  template <class Sublayer>
  Tensor residual(const Tensor& x, torch::nn::LayerNorm& norm, Sublayer&& sublayer, bool training);
  Tensor feed_forward(const Tensor& x, bool training);

 public:
  TransformerLayerOptions options;
  torch::nn::Linear linear1{nullptr};
  torch::nn::Linear linear2{nullptr};
};

class TransformerEncoderLayerImpl : public torch::nn::Cloneable<TransformerEncoderLayerImpl>,
                                    public TransformerSublayers {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerLayerOptions& options);
  void reset() override;
  // x (B, S, E); src_pad_mask (B, S) true = padding -> (B, S, E)
  Tensor forward(const Tensor& x, const Tensor& src_pad_mask = {});

  MultiheadAttention self_attn{nullptr};
  torch::nn::LayerNorm norm1{nullptr};
  torch::nn::LayerNorm norm2{nullptr};
};
TORCH_MODULE(TransformerEncoderLayer);

// Where one decoder layer keeps what it needs between incremental steps: entries of the caller's
// DecoderState, batch-major, updated in place.
struct DecoderLayerCache {
  DecoderState* state;        // holds the self-attention cache, which grows each step:
  const std::string* self_k;  //   the entry of the (B, H, t, D) keys of the target positions so far
  const std::string* self_v;  //   (B, H, t, D)
  const std::string*
      memory_k;  // the entry of the (B, H, S, D) encoder output's keys, computed once
  const std::string* memory_v;  //   per sentence; (B, H, S, D) values
};

class TransformerDecoderLayerImpl : public torch::nn::Cloneable<TransformerDecoderLayerImpl>,
                                    public TransformerSublayers {
 public:
  explicit TransformerDecoderLayerImpl(const TransformerLayerOptions& options);
  void reset() override;
  // x (B, T, E); memory (B, S, E); causal (T, T) mask; memory_pad_mask (B, S).
  // With `cache`, x holds only the newest position(s): their keys/values are appended to the
  // cache, which is attended instead of x, and memory K/V come from the cache. `cross_weights`,
  // when given, receives (B, H, T, S).
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& causal,
                 const Tensor& memory_pad_mask, DecoderLayerCache* cache = nullptr,
                 Tensor* cross_weights = nullptr);

  MultiheadAttention self_attn{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  torch::nn::LayerNorm norm1{nullptr};
  torch::nn::LayerNorm norm2{nullptr};
  torch::nn::LayerNorm norm3{nullptr};
};
TORCH_MODULE(TransformerDecoderLayer);

}  // namespace nmtzoo
