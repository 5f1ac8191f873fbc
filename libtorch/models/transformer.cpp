// SPDX-License-Identifier: MIT
#include "libtorch/models/transformer.h"

#include <torch/torch.h>

#include <cmath>

#include "libtorch/models/functional.h"

namespace nmtzoo {

namespace {

TransformerLayerOptions layer_options(const TransformerOptions& options) {
  return TransformerLayerOptions(options.d_model(), options.heads())
      .ffn_dim(options.ffn_dim())
      .dropout(options.dropout())
      .attention_dropout(options.attention_dropout())
      .activation_dropout(options.activation_dropout())
      .activation(options.activation())
      .norm(options.norm())
      .max_relative_positions(options.positions() == PositionEncoding::kRelative
                                  ? options.max_relative_positions()
                                  : 0);
}

torch::nn::LayerNorm final_norm(torch::nn::Module& owner, const TransformerOptions& options) {
  if (options.norm() != NormPosition::kPre) return nullptr;
  return owner.register_module(
      "norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
}

}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerEncoderImpl::reset() {
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.encoder_layers(); ++i) {
    layers->push_back(TransformerEncoderLayer(layer_options(options)));
  }
  norm = final_norm(*this, options);
}

Tensor TransformerEncoderImpl::forward(const Tensor& x, const Tensor& src_pad_mask) {
  Tensor h = x;
  for (const auto& layer : *layers)
    h = layer->as<TransformerEncoderLayer>()->forward(h, src_pad_mask);
  return norm ? norm->forward(h) : h;
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerDecoderImpl::reset() {
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.decoder_layers(); ++i) {
    layers->push_back(TransformerDecoderLayer(layer_options(options)));
  }
  norm = final_norm(*this, options);
}

Tensor TransformerDecoderImpl::forward(const Tensor& x, const Tensor& memory, const Tensor& causal,
                                       const Tensor& memory_pad_mask,
                                       std::vector<DecoderLayerCache>* caches,
                                       std::vector<Tensor>* cross_weights) {
  Tensor h = x;
  if (cross_weights != nullptr) cross_weights->assign(layers->size(), Tensor());
  for (size_t i = 0; i < layers->size(); ++i) {
    h = layers->ptr<TransformerDecoderLayerImpl>(i)->forward(
        h, memory, causal, memory_pad_mask, caches != nullptr ? &(*caches)[i] : nullptr,
        cross_weights != nullptr ? &(*cross_weights)[i] : nullptr);
  }
  return norm ? norm->forward(h) : h;
}

TransformerImpl::TransformerImpl(const TransformerOptions& options_) : options(options_) {
  reset();
}

void TransformerImpl::reset() {
  const bool share_all = options.sharing() == EmbeddingSharing::kAll;
  TORCH_CHECK(!share_all || options.src_vocab() == options.tgt_vocab(),
              "sharing all embeddings needs one vocabulary, but got source ", options.src_vocab(),
              " and target ", options.tgt_vocab());
  src_embed =
      register_module("src_embed", make_token_embedding(options.src_vocab(), options.d_model()));
  if (!share_all) {
    tgt_embed =
        register_module("tgt_embed", make_token_embedding(options.tgt_vocab(), options.d_model()));
  }
  if (options.positions() != PositionEncoding::kRelative) {
    auto positions = PositionalEncodingOptions(options.max_positions(), options.d_model())
                         .kind(options.positions());
    src_positions = register_module("src_positions", PositionalEncoding(positions));
    tgt_positions = register_module("tgt_positions", PositionalEncoding(positions));
  }
  encoder = register_module("encoder", TransformerEncoder(options));
  decoder = register_module("decoder", TransformerDecoder(options));
  layer_slots_.clear();
  for (int64_t i = 0; i < options.decoder_layers(); ++i) {
    const auto layer = static_cast<size_t>(i);
    layer_slots_.push_back({layer_slot("self_k", layer), layer_slot("self_v", layer),
                            layer_slot("memory_k", layer), layer_slot("memory_v", layer)});
  }
  if (options.sharing() == EmbeddingSharing::kNone) {
    output_proj = register_module(
        "output_proj",
        torch::nn::Linear(
            torch::nn::LinearOptions(options.d_model(), options.tgt_vocab()).bias(false)));
    torch::NoGradGuard no_grad;
    output_proj->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(options.d_model())));
  }
}

Tensor TransformerImpl::embed(const Tensor& tokens, torch::nn::Embedding& table,
                              PositionalEncoding& positions, int64_t offset, double word_dropout) {
  TORCH_CHECK(offset + tokens.size(1) <= options.max_positions(), "sequence of ",
              offset + tokens.size(1),
              " positions exceeds max_positions = ", options.max_positions());
  Tensor x = apply_word_dropout(table->forward(tokens), word_dropout, is_training()) *
             std::sqrt(static_cast<double>(options.d_model()));
  if (positions) x = x + positions->forward(tokens.size(1), offset);  // relative: in attention
  return apply_dropout(x, options.dropout(), is_training());
}

Tensor TransformerImpl::encode_memory(const Tensor& src_tokens, const Tensor& src_pad_mask) {
  TORCH_CHECK(src_tokens.dim() == 2 && src_pad_mask.sizes() == src_tokens.sizes(),
              "src_tokens and src_pad_mask must both be (B, S), but got ", src_tokens.sizes(),
              " and ", src_pad_mask.sizes());
  return encoder->forward(
      embed(src_tokens, src_embed, src_positions, 0, options.source_word_dropout()), src_pad_mask);
}

DecoderState TransformerImpl::encode(const Tensor& src_tokens, const Tensor& src_pad_mask) {
  DecoderState state;
  Tensor memory = encode_memory(src_tokens, src_pad_mask);
  state.set(kMemorySlot, memory, SlotKind::kSource);
  state.set(kMemoryPadMaskSlot, src_pad_mask, SlotKind::kSource);
  for (size_t i = 0; i < decoder->layers->size(); ++i) {
    auto [k, v] =
        decoder->layers->ptr<TransformerDecoderLayerImpl>(i)->multihead_attn->project_kv(memory);
    const LayerSlots& slots = layer_slots_[i];
    state.set(slots.memory_k, k, SlotKind::kSource);
    state.set(slots.memory_v, v, SlotKind::kSource);
    state.set(slots.self_k, Tensor(), SlotKind::kStep);
    state.set(slots.self_v, Tensor(), SlotKind::kStep);
  }
  return state;
}

Tensor TransformerImpl::decode_step(const Tensor& prev_tokens, DecoderState& state) {
  const size_t n_layers = decoder->layers->size();
  std::vector<DecoderLayerCache> caches;
  caches.reserve(n_layers);
  for (size_t i = 0; i < n_layers; ++i) {
    const LayerSlots& slots = layer_slots_[i];
    caches.push_back({&state, &slots.self_k, &slots.self_v, &slots.memory_k, &slots.memory_v});
  }
  Tensor x = embed(prev_tokens.view({-1, 1}), target_table(), tgt_positions, state.step,
                   options.target_word_dropout());
  std::vector<Tensor> cross_weights;
  // The layers' caches hold the source's keys and values; the memory itself is not read (nor
  // gathered when sentences leave).
  Tensor h = decoder->forward(x, Tensor(), {}, state[kMemoryPadMaskSlot], &caches,
                              state.record_attention ? &cross_weights : nullptr);
  if (state.record_attention) {
    state.layer_attention.clear();
    for (const auto& weights : cross_weights) state.layer_attention.push_back(weights.squeeze(2));
    state.attention = torch::stack(state.layer_attention).mean(std::vector<int64_t>{0, 2});
  }
  ++state.step;
  return step_log_probs(h.squeeze(1), output_projection(), state);
}

Tensor TransformerImpl::features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                                 const Tensor& tgt_in) {
  Tensor memory = encode_memory(src_tokens, src_pad_mask);
  Tensor x = embed(tgt_in, target_table(), tgt_positions, 0, options.target_word_dropout());
  return decoder->forward(x, memory, causal_mask(tgt_in.size(1), tgt_in.device()), src_pad_mask);
}

Tensor TransformerImpl::output_layer(const Tensor& features) {
  OutputProjection projection = output_projection();
  return apply_linear(features, projection.weight, projection.bias);
}

EncoderDecoder::OutputProjection TransformerImpl::output_projection() {
  if (output_proj) return {output_proj->weight, output_proj->bias};
  return {target_table()->weight, Tensor()};
}

}  // namespace nmtzoo
