// SPDX-License-Identifier: MIT
#include "libtorch/models/encoder_decoder.h"

#include <torch/torch.h>

#include "libtorch/models/functional.h"

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

void DecoderState::set(const std::string& name, Tensor value, SlotKind kind, Tensor rows) {
  if (Slot* slot = find(name)) {
    slot->value = std::move(value);
    slot->kind = kind;
    slot->pending_rows = std::move(rows);
    return;
  }
  slots_.push_back({name, std::move(value), kind, std::move(rows)});
}

DecoderState::Slot* DecoderState::find(const std::string& name) {
  for (auto& slot : slots_) {
    if (slot.name == name) return &slot;
  }
  return nullptr;
}

const DecoderState::Slot* DecoderState::find(const std::string& name) const {
  return const_cast<DecoderState*>(this)->find(name);
}

bool DecoderState::contains(const std::string& name) const { return find(name) != nullptr; }

DecoderState::Slot& DecoderState::existing(const std::string& name) {
  Slot* slot = find(name);
  TORCH_CHECK(slot != nullptr, "the decoder state has no entry '", name, "'");
  return *slot;
}

void DecoderState::gather_pending(Slot& slot) {
  if (!slot.pending_rows.defined()) return;
  select_rows(slot.value, slot.pending_rows);
  slot.pending_rows = Tensor();
}

Tensor& DecoderState::operator[](const std::string& name) {
  Slot& slot = existing(name);
  gather_pending(slot);
  return slot.value;
}

const Tensor& DecoderState::append(const std::string& name, const Tensor& value, int64_t dim) {
  Slot& slot = existing(name);
  TORCH_CHECK(dim > 0, "append to the decoder state entry '", name, "' along dim ", dim,
              ": rows (dim 0) cannot grow");
  if (!slot.value.defined()) {
    slot.value = value;
    slot.pending_rows = Tensor();
    return slot.value;
  }
  const Tensor& old = slot.value;
  std::vector<int64_t> sizes = old.sizes().vec();
  if (slot.pending_rows.defined()) sizes[0] = slot.pending_rows.size(0);
  const int64_t old_length = sizes.at(dim);
  sizes[dim] += value.size(dim);
  Tensor grown = at::empty(sizes, old.options());
  Tensor head = grown.narrow(dim, 0, old_length);
  if (slot.pending_rows.defined()) {
    at::index_select_out(head, old, 0, slot.pending_rows);
  } else {
    head.copy_(old);
  }
  grown.narrow(dim, old_length, value.size(dim)).copy_(value);
  slot.value = std::move(grown);
  slot.pending_rows = Tensor();
  return slot.value;
}

const Tensor& DecoderState::operator[](const std::string& name) const {
  return const_cast<DecoderState&>(*this)[name];
}

DecoderState::IndexedRows DecoderState::indexed(const std::string& name) const {
  const Slot& slot = const_cast<DecoderState&>(*this).existing(name);
  return {slot.value, slot.pending_rows};
}

SlotKind DecoderState::kind(const std::string& name) const {
  const Slot* slot = find(name);
  TORCH_CHECK(slot != nullptr, "the decoder state has no entry '", name, "'");
  return slot->kind;
}

std::vector<std::string> DecoderState::names() const {
  std::vector<std::string> names;
  for (const auto& slot : slots_) names.push_back(slot.name);
  return names;
}

void DecoderState::reorder(const Tensor& rows, bool source_rows_changed) {
  for (auto& slot : slots_) {
    if (!slot.value.defined()) continue;
    if (slot.kind == SlotKind::kStep || (source_rows_changed && slot.kind == SlotKind::kSource)) {
      // Row i is then old row pending[rows[i]]: the permutations compose on the (B) indices.
      slot.pending_rows =
          slot.pending_rows.defined() ? slot.pending_rows.index_select(0, rows) : rows;
    }
  }
  select_rows(attention, rows);
  for (auto& tensor : layer_attention) select_rows(tensor, rows);
  for (auto& child : children) child.reorder(rows, source_rows_changed);
}

const DecoderState::Slot* DecoderState::first_defined() const {
  for (const auto& slot : slots_) {
    if (slot.value.defined() && slot.kind != SlotKind::kShared) return &slot;
  }
  for (const auto& child : children) {
    if (const Slot* slot = child.first_defined()) return slot;
  }
  return nullptr;
}

int64_t DecoderState::rows() const {
  const Slot* slot = first_defined();
  if (slot == nullptr) return -1;
  return slot->pending_rows.defined() ? slot->pending_rows.size(0) : slot->value.size(0);
}

void DecoderState::repeat_rows(int64_t times) {
  const Slot* slot = first_defined();
  if (times == 1 || slot == nullptr) return;
  reorder(
      torch::arange(rows(), slot->value.options().dtype(torch::kLong)).repeat_interleave(times));
}

Tensor EncoderDecoder::step_log_probs(const Tensor& features, const OutputProjection& projection,
                                      DecoderState& state) {
  Tensor logits;
  if (state.vocabulary.defined()) {
    static const std::string kWeightSlot = "shortlist_weight";
    static const std::string kBiasSlot = "shortlist_bias";
    if (!state.contains(kWeightSlot)) {
      state.set(kWeightSlot, projection.weight.index_select(0, state.vocabulary),
                SlotKind::kShared);
      state.set(
          kBiasSlot,
          projection.bias.defined() ? projection.bias.index_select(0, state.vocabulary) : Tensor(),
          SlotKind::kShared);
    }
    logits = apply_linear(features, state[kWeightSlot], state[kBiasSlot]);
  } else {
    logits = apply_linear(features, projection.weight, projection.bias);
  }
  // The step's logits are its own: outside autograd, float32 ones on the CPU are normalised where
  // they are (same values bit for bit), sparing a (B, V) write to fresh memory per step. Other
  // devices keep the out-of-place operator (in place is untested there).
  if (logits.device().is_cpu() && logits.scalar_type() == torch::kFloat &&
      !at::GradMode::is_enabled()) {
    return at::log_softmax_out(logits, logits, -1);
  }
  return logits.log_softmax(-1);
}

std::string layer_slot(const char* name, size_t layer) {
  return std::string(name) + "." + std::to_string(layer);
}

Tensor EncoderDecoder::forward(const Tensor& src_tokens, const Tensor& src_pad_mask,
                               const Tensor& tgt_in) {
  return output_layer(features(src_tokens, src_pad_mask, tgt_in));
}

}  // namespace nmtzoo
