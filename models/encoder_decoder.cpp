#include "models/encoder_decoder.h"

#include <torch/torch.h>

namespace nmtzoo {

namespace {

void select_rows(Tensor& tensor, const Tensor& rows) {
  if (tensor.defined()) tensor = tensor.index_select(0, rows);
}

}  // namespace

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& parameter : module.parameters()) count += parameter.numel();
  return count;
}

void DecoderState::reorder(const Tensor& rows, bool source_rows_changed) {
  for (auto& tensor : cache) select_rows(tensor, rows);
  select_rows(attention, rows);
  for (auto& tensor : layer_attention) select_rows(tensor, rows);
  if (!source_rows_changed) return;
  select_rows(memory, rows);
  select_rows(memory_pad_mask, rows);
  for (auto& tensor : source_cache) select_rows(tensor, rows);
}

void DecoderState::repeat_rows(int64_t times) {
  if (times == 1) return;
  int64_t batch = memory.size(0);
  reorder(torch::arange(batch, memory.options().dtype(torch::kLong)).repeat_interleave(times));
}

Tensor EncoderDecoder::forward(const Tensor& src_tokens, const Tensor& src_pad_mask,
                               const Tensor& tgt_in) {
  return output_layer(features(src_tokens, src_pad_mask, tgt_in));
}

}  // namespace nmtzoo
