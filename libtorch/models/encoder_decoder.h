// SPDX-License-Identifier: MIT
// The one interface every translation model implements, and the decoder state search owns.
//
// Shapes: B batch (x beam in search), S source length, T target length, E model size,
// V target vocabulary. Every tensor in a DecoderState is batch-major (dim 0 = B), so reordering
// beams is one index_select per tensor, whatever the model.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nmtzoo {

using at::Tensor;

// How an entry of the decoder state follows search's reordering of rows.
enum class SlotKind {
  kSource,  // computed once from the source (memory, its mask, projected keys): identical for all
            // hypotheses of a sentence, so gathered only when sentences leave the batch
  kStep,    // changes or grows every step (self-attention K/V, RNN state): gathered every time
  kShared,  // one value for all rows, not batch-major (a shortlist's output weights): never
            // gathered
};

// What a model keeps between decode_step calls, owned by the caller (search), never by the
// module: named, batch-major entries (CTranslate2's decoder state), e.g. "memory",
// "memory_pad_mask", per layer "self_k.0", "memory_k.0" (layer_slot). A combinator of models
// (an ensemble) keeps each model's own state in `children`.
class DecoderState {
 public:
  // Adds the entry, or replaces its value and kind. An undefined value is allowed (a cache that
  // is filled at the first step). With `rows` (B) defined, the entry is value.index_select(0,
  // rows), gathered when read as after a reorder(): an entry made from another's value that
  // indexed() returned follows that entry's rows.
  void set(const std::string& name, Tensor value, SlotKind kind, Tensor rows = {});
  bool contains(const std::string& name) const;
  // The entry's value, assignable in place; TORCH_CHECK-fails naming the entry when absent.
  Tensor& operator[](const std::string& name);
  const Tensor& operator[](const std::string& name) const;
  // Concatenates `value` to the entry along `dim` (not 0) and returns the result: a cache that
  // grows by a position per step. The rows a reorder() left pending are gathered in the same
  // copy, so a step's self-attention cache is copied once rather than twice (gather, then cat).
  const Tensor& append(const std::string& name, const Tensor& value, int64_t dim);
  // The entry as its value and the rows a reorder() left pending (undefined: none), nothing
  // gathered: the entry is value.index_select(0, rows). For a kernel that reads rows through an
  // index, so a sentence's hypotheses share one copy of its source keys
  // (libtorch/kernels/step_attention.h).
  struct IndexedRows {
    const Tensor& value;
    const Tensor& rows;
  };
  IndexedRows indexed(const std::string& name) const;
  SlotKind kind(const std::string& name) const;
  std::vector<std::string> names() const;  // in insertion order

  // Keeps rows `rows` (B') of every entry (and of every child's): new row i is old row rows[i].
  // When only hypotheses of the same sentences are permuted (beam search without finished
  // sentences leaving), `source_rows_changed` may be false and kSource entries are kept. The
  // entries' rows are gathered when they are next read (operator[]) or appended to (append).
  void reorder(const Tensor& rows, bool source_rows_changed = true);
  // Repeats every row `times` times (row b becomes rows b*times ... b*times+times-1).
  void repeat_rows(int64_t times);
  // B: dim 0 of the first defined entry (or child's); -1 when there is none.
  int64_t rows() const;

  int64_t step = 0;  // target positions decoded so far
  // A shortlist, when defined: the target ids (V') decode_step scores, sorted and starting with
  // the special ids 0..3, on the model's device. decode_step then returns (B, V') log-probabilities
  // normalised over them, column c for token vocabulary[c]. Set by the search before the first
  // step; a combinator passes it to its children.
  Tensor vocabulary;
  std::vector<DecoderState> children;  // states of the models a combinator drives

  // Filled by decode_step when record_attention is true, for plots:
  bool record_attention = false;
  Tensor attention;                     // (B, S) cross-attention of the last step (head/layer mean)
  std::vector<Tensor> layer_attention;  // per decoder layer: (B, H, S) of the last step

 private:
  struct Slot {
    std::string name;
    Tensor value;
    SlotKind kind;
    Tensor pending_rows;  // when defined, the entry is value.index_select(0, pending_rows)
  };
  Slot* find(const std::string& name);
  const Slot* find(const std::string& name) const;
  Slot& existing(const std::string& name);  // TORCH_CHECK-fails naming the entry when absent
  static void gather_pending(Slot& slot);
  const Slot* first_defined() const;  // of the entries, then of the children's
  std::vector<Slot> slots_;
};

// The name of a per-layer entry: layer_slot("self_k", 0) == "self_k.0".
std::string layer_slot(const char* name, size_t layer);

// Entries every encoder-decoder's encode() fills.
inline constexpr const char* kMemorySlot = "memory";                  // (B, S, E) encoder output
inline constexpr const char* kMemoryPadMaskSlot = "memory_pad_mask";  // (B, S) bool, true = pad

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

  // The vocabulary projection behind output_layer, when it is one linear layer: weight (V, F)
  // and bias (V, or undefined). Training's loss then fuses it with the cross entropy
  // (libtorch/train/loss.h); a model without one (undefined weight) gets output_layer + the loss.
  struct OutputProjection {
    Tensor weight;
    Tensor bias;
  };
  virtual OutputProjection output_projection() { return {}; }

  // (B, T, V) logits; output_layer(features(...)).
  Tensor forward(const Tensor& src_tokens, const Tensor& src_pad_mask, const Tensor& tgt_in);

  virtual int64_t max_positions() const = 0;  // longest source or target sequence, in tokens

 protected:
  // features (B, F) -> log-probabilities (B, V) through the output projection, or (B, V') over
  // state.vocabulary's rows only when a shortlist is set (the rows are gathered once per state,
  // into kShared entries).
  static Tensor step_log_probs(const Tensor& features, const OutputProjection& projection,
                               DecoderState& state);
};

}  // namespace nmtzoo
