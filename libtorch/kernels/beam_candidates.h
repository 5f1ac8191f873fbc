// SPDX-License-Identifier: MIT
// Beam search's step on CPU: the best candidates of each sentence over its K hypotheses' scores
// plus their next-token log-probabilities, in one pass over the (K, V) log-probabilities.
//
// Why: the composition `(scores + log_probs).view(N, K V).topk(c)` writes the (N, K, V) sums to
// memory (one pass over ~50 MB per step at 1,500 rows of 8,000 tokens) and LibTorch 1.13's CPU
// topk copies each row into (value, index) pairs before its partial sort (another two). Here a
// block of 64 sums is compared with the c-th best so far and scanned only if it holds a larger
// one, which after the first blocks is rare.
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace nmtzoo {

// log_probs (N, K, V) float32 contiguous, scores (N, K) float32, 1 <= count <= K V. Returns
// (values (N, count) float32, beams (N, count) int64, tokens (N, count) int64): the count largest
// of scores[n, k] + log_probs[n, k, v] over (k, v), largest first, each sum the float32 sum the
// composition computes; of equal sums the lower k V + v comes first. NaN counts as smaller than
// everything.
std::tuple<at::Tensor, at::Tensor, at::Tensor> beam_candidates(const at::Tensor& log_probs,
                                                               const at::Tensor& scores,
                                                               int64_t count);

}  // namespace nmtzoo
