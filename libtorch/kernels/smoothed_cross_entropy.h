// SPDX-License-Identifier: MIT
// The label-smoothed cross-entropy of rows of float32 logits, and its gradient p - q, one row at
// a time while it is in the first-level cache: the inner loop of libtorch/train/loss.h's fused
// projection and loss on CPU.
//
// Why: the fused projection + loss (libtorch/train/loss.cpp) computed it per chunk with LibTorch's
// operators: a row sum, a softmax (three passes), a gather, a subtraction and a column sum, each
// a pass over a 2 MiB chunk that does not fit this CPU's 1 MiB second-level cache; on one thread
// the softmax alone took ~70 ms of a transformer_small update (2.9 ns per logit). Here a 32 KiB
// row is read three times from L1: max and sum, exp and its sum, then p - q (and the bias's
// gradient). The exponential is a Cephes-style polynomial written so the compiler vectorises it
// (libm's expf does not vectorise without -ffast-math); relative error below 2e-7.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// logits (R, V) float32 contiguous; target (R) int64. Writes row_loss and row_nll (R, float64):
// loss_i = on_target nll_i - other sum_v log p_iv, nll_i = -log p_i,target (from the log-sum-exp,
// exact where p underflows). With `grad` defined ((R, V) float32 contiguous, may be `logits`
// itself) writes p - q there, q = other everywhere plus on_target on the target; with
// `grad_bias` defined ((V) float32) adds the column sums of p - q to it.
void smoothed_cross_entropy_rows(const at::Tensor& logits, const at::Tensor& target,
                                 double on_target, double other, const at::Tensor& row_loss,
                                 const at::Tensor& row_nll, const at::Tensor& grad,
                                 const at::Tensor& grad_bias);

}  // namespace nmtzoo
