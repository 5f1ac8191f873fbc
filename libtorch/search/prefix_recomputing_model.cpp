// SPDX-License-Identifier: MIT
#include "libtorch/search/prefix_recomputing_model.h"

#include <torch/torch.h>

namespace nmtzoo {

PrefixRecomputingModel::PrefixRecomputingModel(std::shared_ptr<EncoderDecoder> model)
    : model_(register_module("model", std::move(model))) {}

DecoderState PrefixRecomputingModel::encode(const Tensor& src_tokens, const Tensor& src_pad_mask) {
  DecoderState state;
  state.set("src_tokens", src_tokens, SlotKind::kSource);
  state.set("src_pad_mask", src_pad_mask, SlotKind::kSource);
  state.set("prefix", Tensor(), SlotKind::kStep);
  return state;
}

Tensor PrefixRecomputingModel::decode_step(const Tensor& prev_tokens, DecoderState& state) {
  Tensor& prefix = state["prefix"];
  prefix = prefix.defined() ? torch::cat({prefix, prev_tokens.unsqueeze(1)}, 1)
                            : prev_tokens.unsqueeze(1);
  ++state.step;
  Tensor logits = model_->forward(state["src_tokens"], state["src_pad_mask"], prefix).select(1, -1);
  if (state.vocabulary.defined()) logits = logits.index_select(1, state.vocabulary);
  return logits.log_softmax(-1);
}

Tensor PrefixRecomputingModel::features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                                        const Tensor& tgt_in) {
  return model_->features(src_tokens, src_pad_mask, tgt_in);
}

Tensor PrefixRecomputingModel::output_layer(const Tensor& features) {
  return model_->output_layer(features);
}

}  // namespace nmtzoo
