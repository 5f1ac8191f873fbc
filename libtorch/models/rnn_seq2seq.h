// SPDX-License-Identifier: MIT
// The RNN encoder-decoder family: Bahdanau et al. (2015) with attention, Luong et al. (2015)
// style attention on the current state, and Cho et al. (2014) without attention, as options of
// one module.
//
// Encoder: embeddings -> bidirectional GRU/LSTM; annotation h_j = [forward_j; backward_j] (2n).
// Decoder (attention_query = previous, Bahdanau):
//   c_i = attention(s_{i-1}, h);  s_i = RNN([E y_{i-1}; c_i], s_{i-1})
//   t_i = maxout(U_o s_{i-1} + V_o E y_{i-1} + C_o c_i);  p(y_i) = softmax(W_o t_i)
// Decoder (attention_query = current, Luong, with input feeding):
//   s_i = RNN([E y_{i-1}; t_{i-1}], s_{i-1});  c_i = attention(s_i, h);  t_i = tanh(W_c [s_i; c_i])
// Decoder (attention_query = conditional, the cGRU of Sennrich et al. 2017, Nematus):
//   s'_i = RNN_1(E y_{i-1}, s_{i-1});  c_i = attention(s'_i, h);  s_i = RNN_2(c_i, s'_i)
//   t_i = maxout(U_o s_i + V_o E y_{i-1} + C_o c_i)
// Decoder layers above the first read the new state of the layer below.
// Without attention, c_i = [forward_S; backward_1] for every i (Cho et al. 2014).
// s_0 = tanh(W_s backward_1), as in the paper.
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "libtorch/models/attention.h"
#include "libtorch/models/encoder_decoder.h"
#include "torch_free/archs/options/rnn_options.h"

namespace nmtzoo {

// DecoderState entries: memory, memory_pad_mask, and projected "keys" (B, S, A) or, without
// attention, the fixed "context" (B, 2n) (kSource); "hidden" (B, L, n), "cell" (B, L, n) for
// LSTM and the fed-back t_{i-1} "feed" (B, l) for Luong (kStep). Added by the first
// decode_step of a beam search or of one sentence on the CPU in float32 with the fast kernels
// on: "context_projections" (B, S, G + R) (kSource), the encoder outputs through the context's
// columns of the cell that reads the context (G = 3n or 4n gates) and of the readout (R).
class RnnSeq2SeqImpl : public EncoderDecoder {
 public:
  explicit RnnSeq2SeqImpl(const RnnSeq2SeqOptions& options);
  void reset();
  void reset_parameters();

  DecoderState encode(const Tensor& src_tokens, const Tensor& src_pad_mask) override;
  Tensor decode_step(const Tensor& prev_tokens, DecoderState& state) override;
  Tensor features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                  const Tensor& tgt_in) override;
  Tensor output_layer(const Tensor& features) override;
  OutputProjection output_projection() override;
  int64_t max_positions() const override { return options.max_positions(); }

  RnnSeq2SeqOptions options;
  torch::nn::Embedding src_embed{nullptr};
  torch::nn::Embedding tgt_embed{nullptr};  // null when sharing all
  torch::nn::GRU encoder_gru{nullptr};      // one of these two, registered as "encoder"
  torch::nn::LSTM encoder_lstm{nullptr};
  torch::nn::Linear init_proj{nullptr};  // W_s: backward_1 -> s_0 of every decoder layer
  // GRUCell or LSTMCell per layer; a conditional decoder's RNN_2 is the second, after RNN_1.
  torch::nn::ModuleList decoder_cells{nullptr};
  Attention attention{nullptr};            // null without attention
  torch::nn::Linear readout{nullptr};      // maxout pre-activation, or W_c of the tanh layer
  torch::nn::Linear output_proj{nullptr};  // W_o; null when tied to the target embedding

 private:
  bool lstm() const { return options.cell() == RnnCell::kLstm; }
  bool luong() const { return options.attention_query() == AttentionQuery::kCurrent; }
  bool conditional() const { return options.attention_query() == AttentionQuery::kConditional; }
  torch::nn::Embedding& target_table() { return tgt_embed ? tgt_embed : src_embed; }
  Tensor dropout(const Tensor& x);
  // One decoder step. `embedded` (B, m) is E y_{i-1}; state tensors are read and replaced.
  // Returns the readout input (Bahdanau), its pre-activation (Bahdanau with context projections)
  // or the readout output t_i (Luong), and the attention weights (B, S) (undefined without
  // attention).
  // `training`, from training_steps(), runs the step's products and attention through the
  // kernels that sum the shared tensors' gradients over the steps.
  struct TrainingSteps;
  std::pair<Tensor, Tensor> step(const Tensor& embedded, DecoderState& state,
                                 const TrainingSteps* training = nullptr);
  // For a forward pass over whole target sentences under autograd with the kernels on (else none).
  std::unique_ptr<TrainingSteps> training_steps(const DecoderState& state);
  Tensor apply_readout(const Tensor& readout_input);  // (..., in) -> t (..., l)
  Tensor readout_activation(const Tensor& pre);       // maxout or tanh of the readout's product
  // The step's output as t_i: `out` as step() returned it from `state`.
  Tensor read_out(const Tensor& out, const DecoderState& state);
  // Whether context projections of this memory may be used (see add_context_projections).
  bool projects_context(const Tensor& memory) const;
  Tensor project_context(const Tensor& memory);
  // Adds context_projections to a state whose rows share sentences (beam search) or hold one.
  void add_context_projections(DecoderState& state);
  // The decoder cell that reads the context: RNN_2 of a conditional decoder, else the first.
  int64_t context_cell() const { return conditional() ? 1 : 0; }
  // Its W_ih and b_ih, a GRU's or an LSTM's.
  std::pair<Tensor, Tensor> context_cell_input();
  // The bidirectional encoder over right-padded embeddings (B, S, m): the annotations (B, S, 2n),
  // zero at padding, the last layer's forward state after each sentence's last word and its
  // backward state after the first word.
  struct EncoderOutput {
    Tensor memory, forward_last, backward_first;
  };
  EncoderOutput run_encoder(const Tensor& embedded, const Tensor& pad_mask);
};
TORCH_MODULE(RnnSeq2Seq);

}  // namespace nmtzoo
