// SPDX-License-Identifier: MIT
// Attention of a decoding step on CPU: one new query position per row against that row's keys
// and values, scores, masked softmax and weighted sum in one pass per (row, head).
//
// Why: the composition runs two batched products whose matrices are 1 x D by D x S (B x H of
// them, each a oneDNN call of ~0.3 us), a masked_fill and a softmax. At beam 5 over 300 sentences
// that is 6,000 calls per product and layer; the calls, not the arithmetic, took most of the
// ~4 ms per layer and step. And the source's keys and values are read through an index
// (`key_rows`), so the K hypotheses of a sentence share one copy of its encoder keys instead of
// a K-fold copy gathered again whenever a sentence leaves the batch.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <tuple>

namespace nmtzoo {

// Shaw et al. (2018) relative positions of self-attention: a key at position j seen from the
// query at position query_offset adds q . keys[c] to its score and weight * values[c] to the
// output, c = clamp(j - query_offset, -max_distance, max_distance) + max_distance.
struct StepRelativePositions {
  at::Tensor keys;    // (2 max_distance + 1, D)
  at::Tensor values;  // (2 max_distance + 1, D)
  int64_t max_distance = 0;
  int64_t query_offset = 0;
};

// Whether step_attention takes these operands: outside autograd (or none requires a gradient),
// fast kernels on, float32 CPU tensors; q (B, H, 1, D); keys and values (B', H, S, D) with
// contiguous rows of D; key_rows and value_rows (B) int64 or undefined (then B' = B);
// key_pad_mask (B, S) bool or undefined.
bool step_attention_applies(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& key_rows, const at::Tensor& value_rows,
                            const at::Tensor& key_pad_mask);

// (B, H, 1, D), contiguous: for query row b, the keys keys[key_rows[b]] (keys[b] when undefined)
// and values values[value_rows[b]], scores q . k (q already scaled), plus the relative terms when
// `relative` is given, -inf where key_pad_mask[b] is true, softmax over S, weighted sum of the
// values. A row whose keys are all masked gets NaN, as the composition's softmax gives. The
// exponential is a float32 polynomial (libtorch/kernels/vector_math.h) and the sums run in another
// order than oneDNN's products: results equal the composition's up to float32 rounding.
at::Tensor step_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                          const at::Tensor& key_rows, const at::Tensor& value_rows,
                          const at::Tensor& key_pad_mask,
                          const StepRelativePositions* relative = nullptr);

// The RNN decoder's attention of a step: one query per row over its source positions, scored
// additively (Bahdanau et al. 2015: energy . tanh(query + key), the query already projected) or
// by dot product times `scale` (Luong et al. 2015's dot and general), a masked softmax and the
// weighted sum of the encoder outputs (`memory`, as wide as it is, not as the keys). Why: the
// composition writes the (B, S, A) sums and their tanh (46 MB each per step at beam 5 over 300
// sentences with A = 512), and its weighted sum is B products of 1 x S by S x M, a oneDNN call
// each. Keys and memory are read through row indices as in step_attention.
//
// Takes: outside autograd (or nothing requires a gradient), fast kernels on, float32 CPU; query
// (B, A); keys (B', S, A) and memory (B'', S, M) with contiguous rows; energy (A) or undefined
// (dot scores); key_rows, memory_rows and key_pad_mask as for step_attention.
bool step_context_applies(const at::Tensor& query, const at::Tensor& keys, const at::Tensor& energy,
                          const at::Tensor& memory, const at::Tensor& key_rows,
                          const at::Tensor& memory_rows, const at::Tensor& key_pad_mask);

// Returns the context (B, M) and the weights (B, S); a row whose positions are all masked gets
// NaN, as the composition's softmax gives. tanh and the exponential are float32 polynomials
// (libtorch/kernels/vector_math.h): equal to the composition up to rounding.
std::tuple<at::Tensor, at::Tensor> step_context(const at::Tensor& query, const at::Tensor& keys,
                                                const at::Tensor& energy, double scale,
                                                const at::Tensor& memory,
                                                const at::Tensor& key_rows,
                                                const at::Tensor& memory_rows,
                                                const at::Tensor& key_pad_mask);

class StepSourceSums;

// step_context under autograd, for training: the steps of one forward pass share the source
// (keys and memory), and each step's backward adds the source's gradients into one pair of (B, S,
// A) and (B, S, M) buffers that autograd receives after the last step
// (libtorch/kernels/deferred_gradients.h), and returns the query's and the energy's, the tanh
// recomputed. Why: per step, the composition wrote the (B, 1, S, A) sums and their tanh, multiplied
// them by the energy in products whose inner dimension is 1 (forward and backward), took the
// weighted sum as B products, and autograd added a fresh (B, S, A) and (B, S, M) gradient of the
// source. Profiled per update of the RNN recipe before it (one thread, traced): tanh and its
// backward 177 ms, the weighted sums' bmm 101, autograd's adds of the source's gradients 98.
class TrainingStepContext {
 public:
  // Whether the kernel takes the source: under autograd with fast kernels on; keys (B, S, A) and
  // memory (B, S, M) contiguous float32 on the CPU, both requiring a gradient (S > 0);
  // key_pad_mask (B, S) bool or undefined.
  static bool applies(const at::Tensor& keys, const at::Tensor& memory,
                      const at::Tensor& key_pad_mask);
  TrainingStepContext(const at::Tensor& keys, const at::Tensor& memory,
                      const at::Tensor& key_pad_mask);
  // query (B, A) float32 on the CPU, rows contiguous; energy (A) or undefined (dot scores times
  // scale), as step_context takes them. Returns step_context's context (B, M) and weights (B, S),
  // differentiable in query, energy and the source.
  std::tuple<at::Tensor, at::Tensor> operator()(const at::Tensor& query, const at::Tensor& energy,
                                                double scale) const;

 private:
  at::Tensor keys_, memory_, key_pad_mask_;
  std::shared_ptr<StepSourceSums> sums_;
};

}  // namespace nmtzoo
