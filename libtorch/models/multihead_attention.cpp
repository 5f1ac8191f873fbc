// SPDX-License-Identifier: MIT
#include "libtorch/models/multihead_attention.h"

#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <vector>

#include "libtorch/kernels/batched_matmul.h"
#include "libtorch/kernels/fused_attention.h"
#include "libtorch/kernels/step_attention.h"
#include "libtorch/models/functional.h"

namespace nmtzoo {

namespace {

// Splits a fused projection (B, T, parts * H * D) into `parts` head views (B, H, T, D).
// Why a function of its own: through select, each part's gradient is a zero-filled copy of the
// whole projection with the part copied in, and the parts' copies are then summed (measured 37 ms
// per transformer_small update on one thread); this backward writes each part's gradient into
// one tensor once, in the projection's layout.
class SplitProjectionHeads : public torch::autograd::Function<SplitProjectionHeads> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const Tensor& projected, int64_t parts,
                                                int64_t heads) {
    ctx->saved_data["sizes"] = projected.sizes().vec();
    ctx->saved_data["parts"] = parts;
    ctx->saved_data["heads"] = heads;
    return heads_of(projected, parts, heads).unbind(0);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const Tensor* some = nullptr;
    for (const Tensor& grad : grads) {
      if (grad.defined()) some = &grad;
    }
    if (some == nullptr) return {Tensor(), Tensor(), Tensor()};
    Tensor projected = torch::empty(ctx->saved_data["sizes"].toIntVector(), some->options());
    Tensor split =
        heads_of(projected, ctx->saved_data["parts"].toInt(), ctx->saved_data["heads"].toInt());
    for (size_t i = 0; i < grads.size(); ++i) {
      Tensor part = split[static_cast<int64_t>(i)];
      if (grads[i].defined()) {
        part.copy_(grads[i]);
      } else {
        part.zero_();
      }
    }
    return {projected, Tensor(), Tensor()};
  }

  // (B, T, parts * H * D) -> (parts, B, H, T, D), a view.
  static Tensor heads_of(const Tensor& projected, int64_t parts, int64_t heads) {
    const int64_t b = projected.size(0), t = projected.size(1);
    return projected.view({b, t, parts, heads, projected.size(2) / (parts * heads)})
        .permute({2, 0, 3, 1, 4});
  }
};

std::vector<Tensor> split_projection_heads(const Tensor& projected, int64_t parts, int64_t heads) {
  if (!at::GradMode::is_enabled() || !projected.requires_grad()) {
    return SplitProjectionHeads::heads_of(projected, parts, heads).unbind(0);
  }
  return SplitProjectionHeads::apply(projected, parts, heads);
}

}  // namespace

Tensor relative_position_index(int64_t queries, int64_t keys, int64_t query_offset,
                               int64_t max_distance, const torch::Device& device) {
  const auto options = torch::TensorOptions(torch::kLong).device(device);
  Tensor distance = torch::arange(keys, options).unsqueeze(0) -
                    torch::arange(query_offset, query_offset + queries, options).unsqueeze(1);
  return distance.clamp(-max_distance, max_distance) + max_distance;
}

std::tuple<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k,
                                                        const Tensor& v, const Tensor& attn_mask,
                                                        const Tensor& key_pad_mask, double dropout,
                                                        bool training, bool need_weights,
                                                        const RelativePositions* relative) {
  Tensor scores = batched_matmul(q, k, false, /*transpose_b=*/true);  // (B, H, T, S)
  Tensor index;
  if (relative != nullptr) {
    // q_i . a_ij for every (i, j) as q_i against all 2K + 1 rows, then a gather: one product of
    // T x (2K + 1) per head instead of T x S products of distinct rows.
    index = relative->index.expand(scores.sizes());
    scores = scores + torch::matmul(q, relative->keys.t().to(q.scalar_type())).gather(-1, index);
  }
  Tensor weights = masked_softmax(scores, key_pad_mask, attn_mask);
  Tensor dropped = apply_dropout(weights, dropout, training);
  Tensor output = batched_matmul(dropped, v);
  if (relative != nullptr) {
    // sum_j w_ij a_ij: the weights summed per table row (clipped distances share one), times
    // the table.
    Tensor row_weights =
        dropped
            .new_zeros({scores.size(0), scores.size(1), scores.size(2), relative->values.size(0)})
            .scatter_add(-1, index, dropped);
    output = output + torch::matmul(row_weights, relative->values.to(row_weights.scalar_type()));
  }
  return {output, need_weights ? weights : Tensor()};
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_)
    : options(options_) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t e = options.embed_dim();
  TORCH_CHECK(options.num_heads() > 0 && e % options.num_heads() == 0, "embed_dim (", e,
              ") must be divisible by num_heads (", options.num_heads(), ")");
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * e, e}));
  in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * e}));
  out_proj = register_module("out_proj", torch::nn::Linear(e, e));
  if (options.max_relative_positions() > 0) {
    const int64_t rows = 2 * options.max_relative_positions() + 1;
    relative_keys = register_parameter("relative_keys", torch::empty({rows, head_dim()}));
    relative_values = register_parameter("relative_values", torch::empty({rows, head_dim()}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  in_proj_bias.zero_();
  torch::nn::init::xavier_uniform_(out_proj->weight);
  out_proj->bias.zero_();
  if (relative_keys.defined()) {
    torch::nn::init::xavier_uniform_(relative_keys);
    torch::nn::init::xavier_uniform_(relative_values);
  }
}

Tensor MultiheadAttentionImpl::split_heads(const Tensor& x) const {
  return x.view({x.size(0), x.size(1), options.num_heads(), head_dim()}).transpose(1, 2);
}

std::tuple<Tensor, Tensor, Tensor> MultiheadAttentionImpl::project_qkv(const Tensor& x) {
  return heads_of_qkv(apply_linear(x, in_proj_weight, in_proj_bias));
}

Tensor MultiheadAttentionImpl::project_q(const Tensor& x) { return heads_of_q(project_q_rows(x)); }

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::project_kv(const Tensor& memory) {
  return heads_of_kv(project_kv_rows(memory));
}

Tensor MultiheadAttentionImpl::project_q_rows(const Tensor& x) {
  const int64_t e = options.embed_dim();
  return apply_linear(x, in_proj_weight.narrow(0, 0, e), in_proj_bias.narrow(0, 0, e));
}

Tensor MultiheadAttentionImpl::project_kv_rows(const Tensor& memory) {
  const int64_t e = options.embed_dim();
  return apply_linear(memory, in_proj_weight.narrow(0, e, 2 * e), in_proj_bias.narrow(0, e, 2 * e));
}

std::tuple<Tensor, Tensor, Tensor> MultiheadAttentionImpl::heads_of_qkv(
    const Tensor& projected) const {
  auto qkv = split_projection_heads(projected, 3, options.num_heads());
  return {qkv[0] * query_scale(), qkv[1], qkv[2]};
}

Tensor MultiheadAttentionImpl::heads_of_q(const Tensor& projected) const {
  return split_heads(projected) * query_scale();
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::heads_of_kv(const Tensor& projected) const {
  auto kv = split_projection_heads(projected, 2, options.num_heads());
  return {kv[0], kv[1]};
}

bool MultiheadAttentionImpl::attends_in_one_pass(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const Tensor& key_rows, const Tensor& value_rows,
                                                 const Tensor& attn_mask,
                                                 const Tensor& key_pad_mask,
                                                 bool need_weights) const {
  return !need_weights && !attn_mask.defined() && !is_training() &&
         (!relative_keys.defined() || (relative_keys.scalar_type() == torch::kFloat &&
                                       relative_values.scalar_type() == torch::kFloat)) &&
         step_attention_applies(q, k, v, key_rows, value_rows, key_pad_mask);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::attend(const Tensor& q, const Tensor& k,
                                                          const Tensor& v, const Tensor& attn_mask,
                                                          const Tensor& key_pad_mask,
                                                          bool need_weights, int64_t query_offset,
                                                          const Tensor& key_rows,
                                                          const Tensor& value_rows) {
  Tensor heads, weights;
  if (attends_in_one_pass(q, k, v, key_rows, value_rows, attn_mask, key_pad_mask, need_weights)) {
    std::optional<StepRelativePositions> relative;
    if (relative_keys.defined()) {
      relative = StepRelativePositions{relative_keys, relative_values,
                                       options.max_relative_positions(), query_offset};
    }
    heads = step_attention(q, k, v, key_rows, value_rows, key_pad_mask,
                           relative ? &*relative : nullptr);
  } else {
    const Tensor keys = key_rows.defined() ? k.index_select(0, key_rows) : k;
    const Tensor values = value_rows.defined() ? v.index_select(0, value_rows) : v;
    std::optional<RelativePositions> relative;
    if (relative_keys.defined()) {
      relative =
          RelativePositions{relative_keys, relative_values,
                            relative_position_index(q.size(2), keys.size(2), query_offset,
                                                    options.max_relative_positions(), q.device())};
    }
    std::tie(heads, weights) =
        scaled_dot_product_attention(q, keys, values, attn_mask, key_pad_mask, options.dropout(),
                                     is_training(), need_weights, relative ? &*relative : nullptr);
  }
  const int64_t b = heads.size(0), t = heads.size(2);
  Tensor merged = heads.transpose(1, 2).reshape({b, t, options.embed_dim()});
  return {apply_linear(merged, *out_proj), weights};
}

FusedAttentionOptions MultiheadAttentionImpl::fused_options(const Tensor& attn_mask,
                                                            const Tensor& key_pad_mask) const {
  FusedAttentionOptions fused;
  fused.heads = options.num_heads();
  fused.scale = query_scale();
  fused.dropout = is_training() ? options.dropout() : 0.0;
  fused.attn_mask = attn_mask;
  fused.key_pad_mask = key_pad_mask;
  if (relative_keys.defined()) {
    fused.relative_keys = relative_keys;
    fused.relative_values = relative_values;
    fused.max_distance = options.max_relative_positions();
  }
  return fused;
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query,
                                                           const Tensor& key_value,
                                                           const Tensor& attn_mask,
                                                           const Tensor& key_pad_mask,
                                                           bool need_weights) {
  TORCH_CHECK(query.dim() == 3 && query.size(2) == options.embed_dim(), "query must be (B, T, ",
              options.embed_dim(), "), but got ", query.sizes());
  const bool self = query.is_same(key_value);
  const Tensor q_rows =
      self ? apply_linear(query, in_proj_weight, in_proj_bias) : project_q_rows(query);
  const Tensor kv_rows = self ? Tensor() : project_kv_rows(key_value);
  if (!need_weights) {
    const FusedAttentionOptions fused = fused_options(attn_mask, key_pad_mask);
    if (fused_attention_applies(q_rows, kv_rows, fused)) {
      return {apply_linear(fused_attention(q_rows, kv_rows, fused), *out_proj), Tensor()};
    }
  }
  if (self) {
    auto [q, k, v] = heads_of_qkv(q_rows);
    return attend(q, k, v, attn_mask, key_pad_mask, need_weights);
  }
  auto [k, v] = heads_of_kv(kv_rows);
  return attend(heads_of_q(q_rows), k, v, attn_mask, key_pad_mask, need_weights);
}

}  // namespace nmtzoo
