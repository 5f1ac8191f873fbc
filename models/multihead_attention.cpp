#include "models/multihead_attention.h"

#include <torch/torch.h>

#include <cmath>

#include "kernels/batched_matmul.h"
#include "models/functional.h"

namespace nmtzoo {


std::tuple<Tensor, Tensor> scaled_dot_product_attention(const Tensor& q, const Tensor& k,
                                                        const Tensor& v, const Tensor& attn_mask,
                                                        const Tensor& key_pad_mask, double dropout,
                                                        bool training, bool need_weights) {
  Tensor weights = masked_softmax(batched_matmul(q, k, false, /*transpose_b=*/true),  // (B, H, T, S)
                                  key_pad_mask, attn_mask);
  Tensor output = batched_matmul(apply_dropout(weights, dropout, training), v);
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
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  in_proj_bias.zero_();
  torch::nn::init::xavier_uniform_(out_proj->weight);
  out_proj->bias.zero_();
}

Tensor MultiheadAttentionImpl::split_heads(const Tensor& x) const {
  return x.view({x.size(0), x.size(1), options.num_heads(), head_dim()}).transpose(1, 2);
}

std::tuple<Tensor, Tensor, Tensor> MultiheadAttentionImpl::project_qkv(const Tensor& x) {
  const int64_t b = x.size(0), t = x.size(1);
  // (B, T, 3E) -> (3, B, H, T, D)
  Tensor qkv = apply_linear(x, in_proj_weight, in_proj_bias)
                   .view({b, t, 3, options.num_heads(), head_dim()})
                   .permute({2, 0, 3, 1, 4});
  return {qkv[0] * (1.0 / std::sqrt(static_cast<double>(head_dim()))), qkv[1], qkv[2]};
}

Tensor MultiheadAttentionImpl::project_q(const Tensor& x) {
  const int64_t e = options.embed_dim();
  return split_heads(apply_linear(x, in_proj_weight.narrow(0, 0, e), in_proj_bias.narrow(0, 0, e))) *
         (1.0 / std::sqrt(static_cast<double>(head_dim())));
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::project_kv(const Tensor& memory) {
  const int64_t e = options.embed_dim();
  const int64_t b = memory.size(0), s = memory.size(1);
  Tensor kv = apply_linear(memory, in_proj_weight.narrow(0, e, 2 * e), in_proj_bias.narrow(0, e, 2 * e))
                  .view({b, s, 2, options.num_heads(), head_dim()})
                  .permute({2, 0, 3, 1, 4});
  return {kv[0], kv[1]};
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::attend(const Tensor& q, const Tensor& k,
                                                          const Tensor& v, const Tensor& attn_mask,
                                                          const Tensor& key_pad_mask,
                                                          bool need_weights) {
  auto [heads, weights] = scaled_dot_product_attention(q, k, v, attn_mask, key_pad_mask,
                                                       options.dropout(), is_training(),
                                                       need_weights);
  const int64_t b = heads.size(0), t = heads.size(2);
  Tensor merged = heads.transpose(1, 2).reshape({b, t, options.embed_dim()});
  return {apply_linear(merged, *out_proj), weights};
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query,
                                                           const Tensor& key_value,
                                                           const Tensor& attn_mask,
                                                           const Tensor& key_pad_mask,
                                                           bool need_weights) {
  TORCH_CHECK(query.dim() == 3 && query.size(2) == options.embed_dim(),
              "query must be (B, T, ", options.embed_dim(), "), but got ", query.sizes());
  if (query.is_same(key_value)) {
    auto [q, k, v] = project_qkv(query);
    return attend(q, k, v, attn_mask, key_pad_mask, need_weights);
  }
  auto [k, v] = project_kv(key_value);
  return attend(project_q(query), k, v, attn_mask, key_pad_mask, need_weights);
}

}  // namespace nmtzoo
