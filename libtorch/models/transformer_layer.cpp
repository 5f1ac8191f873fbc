// SPDX-License-Identifier: MIT
#include "libtorch/models/transformer_layer.h"

#include <torch/torch.h>

#include "libtorch/kernels/dropout_layer_norm.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/linear_relu.h"
#include "libtorch/models/functional.h"

namespace nmtzoo {

namespace F = torch::nn::functional;

namespace {

MultiheadAttentionOptions attention_options(const TransformerLayerOptions& options, bool self) {
  return MultiheadAttentionOptions(options.d_model(), options.heads())
      .dropout(options.attention_dropout())
      .self_attention(self)
      .max_relative_positions(self ? options.max_relative_positions() : 0);
}

torch::nn::LayerNorm layer_norm(int64_t d_model) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}));
}

void xavier_linear(torch::nn::Linear& linear) {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(linear->weight);
  linear->bias.zero_();
}

}  // namespace

template <class Sublayer>
Tensor TransformerSublayers::residual(const Tensor& x, torch::nn::LayerNorm& norm,
                                      Sublayer&& sublayer, bool training) {
  if (options.norm() == NormPosition::kPre) {
    return x + apply_dropout(sublayer(norm->forward(x)), options.dropout(), training);
  }
  Tensor out = sublayer(x);
  if (training && at::GradMode::is_enabled() && fast_kernels_enabled() &&
      dropout_add_layer_norm_applies(x, out, norm->weight, norm->bias)) {
    return dropout_add_layer_norm(x, out, options.dropout(), norm->weight, norm->bias,
                                  norm->options.eps());
  }
  return norm->forward(x + apply_dropout(out, options.dropout(), training));
}

Tensor TransformerSublayers::feed_forward(const Tensor& x, bool training) {
  Tensor hidden;
  if (options.activation() == Activation::kRelu &&
      linear_relu_applies(x, linear1->weight, linear1->bias)) {
    hidden = linear_relu(x, linear1->weight, linear1->bias);
  } else {
    hidden = apply_linear(x, *linear1);
    // ReLU in place: the product's output is not needed by its backward, and a (tokens x ffn_dim)
    // tensor fewer is written per layer.
    hidden = options.activation() == Activation::kGelu ? F::gelu(hidden) : hidden.relu_();
  }
  return apply_linear(apply_dropout(hidden, options.activation_dropout(), training), *linear2);
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerLayerOptions& options_)
    : TransformerSublayers(options_) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  self_attn = register_module("self_attn", MultiheadAttention(attention_options(options, true)));
  linear1 = register_module("linear1", torch::nn::Linear(options.d_model(), options.ffn_dim()));
  linear2 = register_module("linear2", torch::nn::Linear(options.ffn_dim(), options.d_model()));
  norm1 = register_module("norm1", layer_norm(options.d_model()));
  norm2 = register_module("norm2", layer_norm(options.d_model()));
  xavier_linear(linear1);
  xavier_linear(linear2);
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& x, const Tensor& src_pad_mask) {
  const bool training = is_training();
  Tensor h = residual(
      x, norm1,
      [&](const Tensor& in) { return std::get<0>(self_attn->forward(in, in, {}, src_pad_mask)); },
      training);
  return residual(
      h, norm2, [&](const Tensor& in) { return feed_forward(in, training); }, training);
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerLayerOptions& options_)
    : TransformerSublayers(options_) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  self_attn = register_module("self_attn", MultiheadAttention(attention_options(options, true)));
  multihead_attn =
      register_module("multihead_attn", MultiheadAttention(attention_options(options, false)));
  linear1 = register_module("linear1", torch::nn::Linear(options.d_model(), options.ffn_dim()));
  linear2 = register_module("linear2", torch::nn::Linear(options.ffn_dim(), options.d_model()));
  norm1 = register_module("norm1", layer_norm(options.d_model()));
  norm2 = register_module("norm2", layer_norm(options.d_model()));
  norm3 = register_module("norm3", layer_norm(options.d_model()));
  xavier_linear(linear1);
  xavier_linear(linear2);
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& x, const Tensor& memory,
                                            const Tensor& causal, const Tensor& memory_pad_mask,
                                            DecoderLayerCache* cache, Tensor* cross_weights) {
  const bool training = is_training();
  auto self_attention = [&](const Tensor& in) {
    if (cache == nullptr) return std::get<0>(self_attn->forward(in, in, causal));
    auto [q, k, v] = self_attn->project_qkv(in);
    const Tensor& self_k = cache->state->append(*cache->self_k, k, 2);
    const Tensor& self_v = cache->state->append(*cache->self_v, v, 2);
    // The cache holds only positions up to the newest one(s); `causal` covers several at once.
    return std::get<0>(self_attn->attend(q, self_k, self_v, causal, {}, false,
                                         /*query_offset=*/self_k.size(2) - q.size(2)));
  };
  auto cross_attention = [&](const Tensor& in) {
    if (cache == nullptr) {
      auto [out, weights] =
          multihead_attn->forward(in, memory, {}, memory_pad_mask, cross_weights != nullptr);
      if (cross_weights != nullptr) *cross_weights = weights;
      return out;
    }
    Tensor q = multihead_attn->project_q(in);
    // A kernel that reads rows through an index takes the source's keys as they are kept, one
    // copy per sentence; the composition takes them gathered per hypothesis.
    DecoderState& state = *cache->state;
    const auto keys = state.indexed(*cache->memory_k);
    const auto values = state.indexed(*cache->memory_v);
    if (cross_weights == nullptr &&
        multihead_attn->attends_in_one_pass(q, keys.value, values.value, keys.rows, values.rows, {},
                                            memory_pad_mask, false)) {
      return std::get<0>(multihead_attn->attend(q, keys.value, values.value, {}, memory_pad_mask,
                                                false, 0, keys.rows, values.rows));
    }
    auto [out, weights] =
        multihead_attn->attend(q, state[*cache->memory_k], state[*cache->memory_v], {},
                               memory_pad_mask, cross_weights != nullptr);
    if (cross_weights != nullptr) *cross_weights = weights;
    return out;
  };
  Tensor h = residual(x, norm1, self_attention, training);
  h = residual(h, norm2, cross_attention, training);
  return residual(
      h, norm3, [&](const Tensor& in) { return feed_forward(in, training); }, training);
}

}  // namespace nmtzoo
