// SPDX-License-Identifier: MIT
// Several models behind the one EncoderDecoder interface (fairseq's EnsembleModel), so the one
// search decodes an ensemble unchanged: each model keeps its own state (a child of the search's
// DecoderState, reordered with it) and the next-token distributions are combined each step.
#pragma once

#include <memory>
#include <vector>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/search/search.h"

namespace nmtzoo {

enum class EnsembleMode {
  kProb,     // log sum_i w_i p_i: the weighted average of probabilities (fairseq)
  kLogProb,  // sum_i w_i log p_i: the weighted sum of log-probabilities (Marian)
};

class EnsembleModel : public EncoderDecoder {
 public:
  // `weights` default to 1/N each. The models must share the target vocabulary.
  explicit EnsembleModel(std::vector<std::shared_ptr<EncoderDecoder>> models,
                         std::vector<double> weights = {}, EnsembleMode mode = EnsembleMode::kProb);

  DecoderState encode(const Tensor& src_tokens, const Tensor& src_pad_mask) override;
  // Combined log-probabilities (B, V); the cross-attention recorded is the models' mean.
  Tensor decode_step(const Tensor& prev_tokens, DecoderState& state) override;
  // Teacher forcing: the combined log-probabilities (B, T, V) of every position.
  Tensor features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                  const Tensor& tgt_in) override;
  Tensor output_layer(const Tensor& features) override { return features; }
  int64_t max_positions() const override;

  // Which cross-attention of model `model` enters the ensemble's recorded attention (the mean of
  // the models' that have one): a layer and head as in selected_attention(); by default the mean
  // of all its layers and heads. Models of different depths each get their own choice.
  void choose_attention(size_t model, const AttentionChoice& choice);

 private:
  Tensor combine(const std::vector<Tensor>& log_probs) const;

  std::vector<std::shared_ptr<EncoderDecoder>> models_;
  std::vector<double> weights_;
  EnsembleMode mode_;
  std::vector<AttentionChoice> attention_choices_;
};

}  // namespace nmtzoo
