// The one interface every translation model implements, and the decoder state search owns.
//
// Shapes: B batch (x beam in search), S source length, T target length, E model size,
// V target vocabulary. Every tensor in a DecoderState is batch-major (dim 0 = B), so reordering
// beams is one index_select per tensor, whatever the model.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <vector>

namespace nmtzoo {

using at::Tensor;

struct DecoderState {
  Tensor memory;                      // (B, S, E) encoder output
  Tensor memory_pad_mask;             // (B, S) bool, true = padding
  std::vector<Tensor> source_cache;   // computed once from the source (keys, projections)
  std::vector<Tensor> cache;          // grows or changes each step (self-attention K/V, RNN state)
  int64_t step = 0;                   // target positions decoded so far

  // Filled by decode_step when record_attention is true, for plots:
  bool record_attention = false;
  Tensor attention;                   // (B, S) cross-attention of the last step (head/layer mean)
  std::vector<Tensor> layer_attention;  // per decoder layer: (B, H, S) of the last step

  // Keeps rows `rows` (B') of every tensor: new row i is old row rows[i]. When only hypotheses
  // of the same sentences are permuted (beam search without finished sentences leaving),
  // `source_rows_changed` may be false: source tensors are then identical per sentence and kept.
  void reorder(const Tensor& rows, bool source_rows_changed = true);
  // Repeats every row `times` times in place (row b becomes rows b*times ... b*times+times-1).
  void repeat_rows(int64_t times);
};

// Number of scalar weights in `module` and its children.
int64_t count_parameters(const torch::nn::Module& module);

class EncoderDecoder : public torch::nn::Module {
 public:
  // src_tokens (B, S) ids; src_pad_mask (B, S) bool, true = padding.
  virtual DecoderState encode(const Tensor& src_tokens, const Tensor& src_pad_mask) = 0;

  // prev_tokens (B) the last target token of each row (BOS first); advances state by one
  // position and returns log-probabilities (B, V) of the next token. Equals the teacher-forced
  // forward() at that position.
  virtual Tensor decode_step(const Tensor& prev_tokens, DecoderState& state) = 0;

  // Teacher forcing: tgt_in (B, T) BOS-shifted targets -> decoder features (B, T, F) before the
  // vocabulary projection (fairseq's extract_features).
  virtual Tensor features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                          const Tensor& tgt_in) = 0;
  // (..., F) features -> (..., V) logits. Separate so the loss can project real tokens only.
  virtual Tensor output_layer(const Tensor& features) = 0;

  // (B, T, V) logits; output_layer(features(...)).
  Tensor forward(const Tensor& src_tokens, const Tensor& src_pad_mask, const Tensor& tgt_in);

  virtual int64_t max_positions() const = 0;  // longest source or target sequence, in tokens
};

}  // namespace nmtzoo
