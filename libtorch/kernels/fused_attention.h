// SPDX-License-Identifier: MIT
// Multi-head attention over whole sequences on CPU (training, validation, scoring), from the
// input projections to the merged heads, forward and backward in one pass per (sentence, head).
//
// Why: the composition reads the heads as views of the projection (B, T, 3, H, D) permuted to
// (B, H, T, D); LibTorch's matmul folds them to 3-D by copying each (three copies per attention
// forward and more in its backward), the scale is a multiply, the masks a masked_fill each, the
// softmax, its dropout and the merge of the heads another pass each, and the backward of the
// heads' split copies the three gradients back into the projection's layout. Per
// transformer_small update on one thread these were ~100 ms of the ~280 outside the products
// (LibTorch profiler, relative positions). Here each (sentence, head) is multiplied straight
// from and into the projections' rows (leading dimensions 3E, 2E or E), by
// libtorch/kernels/small_sgemm.h in training and by oneDNN's sgemm otherwise (so decoding's outputs
// stay those of the builds before it), and the scores of one head (T x S, a few KB) are scaled,
// masked, softmaxed and dropped out while in cache; the backward writes the gradients of q, k and v
// into one tensor shaped like the projection.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmtzoo {

struct FusedAttentionOptions {
  int64_t heads = 1;
  double scale = 1.0;       // multiplies q . k (1 / sqrt(D)) and the relative key terms
  double dropout = 0.0;     // on the weights after the softmax; 0 = none (also outside training)
  at::Tensor attn_mask;     // (T, S) bool, true = forbidden, or undefined
  at::Tensor key_pad_mask;  // (B, S) bool, true = padding, or undefined
  // Shaw et al. (2018): key j seen from query i adds scale * q . relative_keys[c] to the score
  // and weight * relative_values[c] to the output, c = clamp(j - i, -K, K) + K. Both (2K + 1, D)
  // float32, or both undefined.
  at::Tensor relative_keys, relative_values;
  int64_t max_distance = 0;  // K
};

// Whether fused_attention takes these operands: fast kernels on; CPU float32 contiguous
// projections (q_source (B, T, 3E) when kv_source is undefined, else q_source (B, T, E) and
// kv_source (B, S, 2E)), E divisible by heads, T and S > 0; masks bool of the shapes above;
// dropout in [0, 1).
bool fused_attention_applies(const at::Tensor& q_source, const at::Tensor& kv_source,
                             const FusedAttentionOptions& options);

// Self-attention (kv_source undefined: q, k and v are q_source's columns [0, E), [E, 2E) and
// [2E, 3E)) or attention of q_source's rows over kv_source's (k its columns [0, E), v [E, 2E)),
// head h reading columns [h D, (h + 1) D) of each. Returns the heads merged, (B, T, E), before the
// output projection. Differentiable in the projections and the relative tables.
//
// As the composition (scaled_dot_product_attention on the split heads): the dropout masks are
// those chunked_dropout draws on the (B, H, T, S) weights from the same generator state, so both
// paths train alike from one seed. Differences: the exponential is a float32 polynomial
// (libtorch/kernels/vector_math.h) and sums run in another order, so values agree up to float32
// rounding; a query whose keys are all masked gets zero weights (the composition's softmax gives
// NaN), which no attention of the zoo asks for.
at::Tensor fused_attention(const at::Tensor& q_source, const at::Tensor& kv_source,
                           const FusedAttentionOptions& options);

// fused_attention calls so far in this process, for tests.
int64_t fused_attention_calls();

}  // namespace nmtzoo
