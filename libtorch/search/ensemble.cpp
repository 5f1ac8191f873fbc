// SPDX-License-Identifier: MIT
#include "libtorch/search/ensemble.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace nmtzoo {

EnsembleModel::EnsembleModel(std::vector<std::shared_ptr<EncoderDecoder>> models,
                             std::vector<double> weights, EnsembleMode mode)
    : models_(std::move(models)), weights_(std::move(weights)), mode_(mode) {
  TORCH_CHECK(!models_.empty(), "an ensemble needs at least one model");
  if (weights_.empty()) weights_.assign(models_.size(), 1.0 / static_cast<double>(models_.size()));
  TORCH_CHECK(weights_.size() == models_.size(), "an ensemble of ", models_.size(),
              " models needs as many weights, but got ", weights_.size());
  for (size_t i = 0; i < models_.size(); ++i) {
    TORCH_CHECK(weights_[i] > 0, "ensemble weights must be positive, but weight ", i, " is ",
                weights_[i]);
    register_module("model" + std::to_string(i), models_[i]);
  }
  attention_choices_.resize(models_.size());
}

void EnsembleModel::choose_attention(size_t model, const AttentionChoice& choice) {
  TORCH_CHECK(model < models_.size(), "the ensemble has no model ", model);
  attention_choices_[model] = choice;
}

DecoderState EnsembleModel::encode(const Tensor& src_tokens, const Tensor& src_pad_mask) {
  DecoderState state;
  for (auto& model : models_) state.children.push_back(model->encode(src_tokens, src_pad_mask));
  return state;
}

Tensor EnsembleModel::combine(const std::vector<Tensor>& log_probs) const {
  for (const auto& each : log_probs) {
    TORCH_CHECK(each.sizes() == log_probs.front().sizes(),
                "the ensemble's models disagree on the "
                "target vocabulary: ",
                log_probs.front().sizes(), " vs ", each.sizes());
  }
  std::vector<Tensor> weighted;
  for (size_t i = 0; i < log_probs.size(); ++i) {
    weighted.push_back(mode_ == EnsembleMode::kProb ? log_probs[i] + std::log(weights_[i])
                                                    : log_probs[i] * weights_[i]);
  }
  Tensor stacked = torch::stack(weighted);
  return mode_ == EnsembleMode::kProb ? stacked.logsumexp(0) : stacked.sum(0);
}

Tensor EnsembleModel::decode_step(const Tensor& prev_tokens, DecoderState& state) {
  std::vector<Tensor> log_probs;
  std::vector<Tensor> attention;
  for (size_t i = 0; i < models_.size(); ++i) {
    DecoderState& child = state.children[i];
    child.record_attention = state.record_attention;
    child.vocabulary = state.vocabulary;
    log_probs.push_back(models_[i]->decode_step(prev_tokens, child));
    if (state.record_attention && child.attention.defined()) {
      attention.push_back(selected_attention(child, attention_choices_[i]));
    }
  }
  if (!attention.empty()) state.attention = torch::stack(attention).mean(0);
  ++state.step;
  return combine(log_probs);
}

Tensor EnsembleModel::features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                               const Tensor& tgt_in) {
  std::vector<Tensor> log_probs;
  for (auto& model : models_) {
    log_probs.push_back(model->forward(src_tokens, src_pad_mask, tgt_in).log_softmax(-1));
  }
  return combine(log_probs);
}

int64_t EnsembleModel::max_positions() const {
  int64_t limit = models_.front()->max_positions();
  for (const auto& model : models_) limit = std::min(limit, model->max_positions());
  return limit;
}

}  // namespace nmtzoo
