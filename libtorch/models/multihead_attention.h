// SPDX-License-Identifier: MIT
// Multi-head scaled dot-product attention (Vaswani et al. 2017), batch-first, with the parameter
// names of torch.nn.MultiheadAttention (in_proj_weight, in_proj_bias, out_proj) so weights map
// one-to-one. Projections are exposed separately so the incremental decoder can cache K/V.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cmath>
#include <tuple>

#include <c10/core/Device.h>

#include "libtorch/models/functional.h"
#include "torch_free/archs/options/attention_options.h"

namespace nmtzoo {

using at::Tensor;

struct FusedAttentionOptions;  // libtorch/kernels/fused_attention.h, not a public header

// Relative position representations (Shaw, Uszkoreit & Vaswani 2018): the distance j - i from
// query i to key j, clipped to [-K, K], selects a row of `keys`, added to key j when scoring
// query i, and a row of `values`, added to value j in query i's weighted sum.
struct RelativePositions {
  Tensor keys;    // (2K + 1, D): row K + d embeds distance d
  Tensor values;  // (2K + 1, D)
  Tensor index;   // (T, S) int64: the row for each query and key
};

// The (queries, keys) rows of a (2K + 1)-row relative table when query i sits at position
// query_offset + i and key j at position j (an incremental decoder's queries come after the
// keys it has cached).
Tensor relative_position_index(int64_t queries, int64_t keys, int64_t query_offset,
                               int64_t max_distance, const torch::Device& device);

// q (B, H, T, D), k and v (B, H, S, D); attn_mask (T, S) bool, true = forbidden (causal);
// key_pad_mask (B, S) bool, true = padding. q must already be scaled by 1/sqrt(D).
// Returns (B, H, T, D) and, when need_weights, the weights (B, H, T, S).
std::tuple<Tensor, Tensor> scaled_dot_product_attention(
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
    const Tensor& key_pad_mask, double dropout, bool training, bool need_weights,
    const RelativePositions* relative = nullptr);

class MultiheadAttentionImpl : public torch::nn::Cloneable<MultiheadAttentionImpl> {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset() override;
  void reset_parameters();

  // x (B, T, E) -> q, k, v each (B, H, T, D) with q pre-scaled, in one fused matmul.
  std::tuple<Tensor, Tensor, Tensor> project_qkv(const Tensor& x);
  // x (B, T, E) -> scaled q (B, H, T, D).
  Tensor project_q(const Tensor& x);
  // memory (B, S, E) -> k, v (B, H, S, D), in one fused matmul.
  std::tuple<Tensor, Tensor> project_kv(const Tensor& memory);
  // Attention of projected q over k/v, heads merged and out_proj applied: (B, T, E), and the
  // weights (B, H, T, S) when need_weights. With relative positions, query i is at position
  // query_offset + i and key j at j. With key_rows / value_rows (B) defined, query row b attends
  // over k[key_rows[b]] and v[value_rows[b]] (a decoding step's source keys, one copy shared by
  // a sentence's hypotheses).
  std::tuple<Tensor, Tensor> attend(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask, const Tensor& key_pad_mask,
                                    bool need_weights, int64_t query_offset = 0,
                                    const Tensor& key_rows = {}, const Tensor& value_rows = {});
  // Whether attend() takes these operands in one pass (libtorch/kernels/step_attention.h: a
  // decoding step on the CPU, no weights asked for), reading rows through key_rows without a
  // gather; otherwise it gathers them first.
  bool attends_in_one_pass(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_rows, const Tensor& value_rows,
                           const Tensor& attn_mask, const Tensor& key_pad_mask,
                           bool need_weights) const;

  // Whole-sequence attention: query (B, T, E) over key_value (B, S, E) (the same tensor for
  // self-attention). Returns (B, T, E) and weights (B, H, T, S) when need_weights.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key_value,
                                     const Tensor& attn_mask = {}, const Tensor& key_pad_mask = {},
                                     bool need_weights = false);

  MultiheadAttentionOptions options;
  Tensor in_proj_weight;  // (3E, E): rows [0, E) query, [E, 2E) key, [2E, 3E) value
  Tensor in_proj_bias;    // (3E)
  torch::nn::Linear out_proj{nullptr};
  Tensor relative_keys;    // (2K + 1, D), shared by the heads; only with max_relative_positions K
  Tensor relative_values;  // (2K + 1, D)

 private:
  Tensor split_heads(const Tensor& x) const;  // (B, T, E) -> (B, H, T, D)
  double query_scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim())); }
  // The projections' rows: x (B, T, E) -> (B, T, E) queries; memory (B, S, E) -> (B, S, 2E) keys
  // then values. The fused kernel reads these; the composition reads the heads below.
  Tensor project_q_rows(const Tensor& x);
  Tensor project_kv_rows(const Tensor& memory);
  // Heads of projected rows, as views: (B, T, 3E) -> q (scaled), k, v; (B, T, E) -> scaled q;
  // (B, S, 2E) -> k, v; each (B, H, T or S, D).
  std::tuple<Tensor, Tensor, Tensor> heads_of_qkv(const Tensor& projected) const;
  Tensor heads_of_q(const Tensor& projected) const;
  std::tuple<Tensor, Tensor> heads_of_kv(const Tensor& projected) const;
  FusedAttentionOptions fused_options(const Tensor& attn_mask, const Tensor& key_pad_mask) const;
  int64_t head_dim() const { return options.embed_dim() / options.num_heads(); }
};
TORCH_MODULE(MultiheadAttention);

}  // namespace nmtzoo
