// SPDX-License-Identifier: MIT
// Single-head attention with every scoring function of the RNN literature (one module, as
// OpenNMT-py's GlobalAttention): additive (Bahdanau et al. 2015), dot, general and scaled dot
// (Luong et al. 2015). Masking, softmax and the context vector exist once, here.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <optional>
#include <tuple>

#include "torch_free/archs/options/attention_options.h"

namespace nmtzoo {

using at::Tensor;
class RecurrentLinear;      // libtorch/kernels/deferred_gradients.h
class TrainingStepContext;  // libtorch/kernels/step_attention.h

class AttentionImpl : public torch::nn::Cloneable<AttentionImpl> {
 public:
  explicit AttentionImpl(const AttentionOptions& options);
  void reset() override;  // registers only what options.score() needs
  void reset_parameters();

  // keys (B, S, Dk) -> what queries are scored against; depends on the source only, so search
  // computes it once per sentence (Bahdanau's U h_j).
  Tensor project_keys(const Tensor& keys);

  // query (B, T, Dq) or (B, Dq); keys (B, S, Dk); key_pad_mask (B, S) true = padding;
  // projected_keys from project_keys(keys), computed here when empty.
  // Returns context (B, T, Dk) and weights (B, T, S), or (B, Dk) and (B, S) for a 2-D query.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& keys,
                                     const Tensor& key_pad_mask = {},
                                     const Tensor& projected_keys = {});

  // A decoding step in one pass (libtorch/kernels/step_attention.h: outside autograd, on the CPU),
  // keys and projected keys read through the rows search left pending (row b of keys is
  // keys[key_rows[b]], undefined: row b). query (B, Dq). Returns forward's (B, Dk) and (B, S), or
  // nothing when the kernel does not take the operands: the caller then gathers the rows and
  // calls forward.
  std::optional<std::tuple<Tensor, Tensor>> forward_step_in_one_pass(
      const Tensor& query, const Tensor& keys, const Tensor& key_rows, const Tensor& key_pad_mask,
      const Tensor& projected_keys, const Tensor& projected_rows);

  // A training step (query (B, Dq)) through the kernel of libtorch/kernels/step_attention.h, on the
  // source the caller made once per forward pass from forward's keys and project_keys' result (its
  // applies() says when); query_projection: the caller's RecurrentLinear of query_proj for
  // additive scores (libtorch/kernels/deferred_gradients.h), or nullptr. Returns forward's (B, Dk),
  // (B, S).
  std::tuple<Tensor, Tensor> forward_training_step(const Tensor& query,
                                                   const TrainingStepContext& source,
                                                   const RecurrentLinear* query_projection);

  AttentionOptions options;
  torch::nn::Linear query_proj{nullptr};  // additive: W
  torch::nn::Linear key_proj{nullptr};    // additive: U; general: W of q^T W k
  torch::nn::Linear energy{nullptr};      // additive: v

 private:
  Tensor score(const Tensor& query, const Tensor& projected_keys);  // (B,T,Dq) -> (B,T,S)
  // What the step kernels score a query (B, Dq) with: the query as scored (projected for additive
  // scores), the energy (additive) or undefined, and the dot products' scale.
  struct StepScoring {
    Tensor query, energy;
    double scale = 1.0;
  };
  StepScoring step_scoring(const Tensor& query, const RecurrentLinear* query_projection);
};
TORCH_MODULE(Attention);

}  // namespace nmtzoo
