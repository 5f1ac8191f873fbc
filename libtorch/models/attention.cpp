// SPDX-License-Identifier: MIT
#include "libtorch/models/attention.h"

#include <torch/torch.h>

#include <cmath>

#include "libtorch/kernels/batched_matmul.h"
#include "libtorch/kernels/deferred_gradients.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/step_attention.h"
#include "libtorch/models/functional.h"

namespace nmtzoo {

AttentionImpl::AttentionImpl(const AttentionOptions& options_) : options(options_) { reset(); }

void AttentionImpl::reset() {
  const int64_t dq = options.query_dim();
  const int64_t dk = options.key_dim();
  switch (options.score()) {
    case AttentionScore::kAdditive: {
      const int64_t hidden = options.hidden_dim() > 0 ? options.hidden_dim() : dk;
      query_proj = register_module(
          "query_proj", torch::nn::Linear(torch::nn::LinearOptions(dq, hidden).bias(false)));
      key_proj = register_module("key_proj", torch::nn::Linear(dk, hidden));
      energy = register_module("energy",
                               torch::nn::Linear(torch::nn::LinearOptions(hidden, 1).bias(false)));
      break;
    }
    case AttentionScore::kGeneral:
      key_proj = register_module("key_proj",
                                 torch::nn::Linear(torch::nn::LinearOptions(dk, dq).bias(false)));
      break;
    case AttentionScore::kDot:
    case AttentionScore::kScaledDot:
      TORCH_CHECK(dq == dk, "dot-product attention needs query_dim == key_dim, but got ", dq,
                  " and ", dk, "; use general or additive scoring");
      break;
  }
  reset_parameters();
}

void AttentionImpl::reset_parameters() {
  for (auto& parameter : parameters()) {
    torch::NoGradGuard no_grad;
    if (parameter.dim() > 1) {
      torch::nn::init::xavier_uniform_(parameter);
    } else {
      parameter.zero_();
    }
  }
}

Tensor AttentionImpl::project_keys(const Tensor& keys) {
  return key_proj ? apply_linear(keys, *key_proj) : keys;
}

Tensor AttentionImpl::score(const Tensor& query, const Tensor& projected_keys) {
  switch (options.score()) {
    case AttentionScore::kAdditive:
      // (B, T, 1, A) + (B, 1, S, A) -> v^T tanh(.) -> (B, T, S)
      return energy
          ->forward(torch::tanh(apply_linear(query, *query_proj).unsqueeze(2) +
                                projected_keys.unsqueeze(1)))
          .squeeze(-1);
    case AttentionScore::kGeneral:
    case AttentionScore::kDot:
      return batched_matmul(query, projected_keys, false, /*transpose_b=*/true);
    case AttentionScore::kScaledDot:
      return batched_matmul(query, projected_keys, false, /*transpose_b=*/true) /
             std::sqrt(static_cast<double>(options.query_dim()));
  }
  TORCH_CHECK(false, "unknown attention score");
}

std::tuple<Tensor, Tensor> AttentionImpl::forward(const Tensor& query, const Tensor& keys,
                                                  const Tensor& key_pad_mask,
                                                  const Tensor& projected_keys) {
  TORCH_CHECK(query.dim() == 2 || query.dim() == 3, "query must be (B, Dq) or (B, T, Dq), but got ",
              query.sizes());
  TORCH_CHECK(keys.dim() == 3 && keys.size(0) == query.size(0),
              "keys must be (B, S, Dk) with the query's batch, but got ", keys.sizes(), " and ",
              query.sizes());
  const bool single_step = query.dim() == 2;
  const Tensor queries = single_step ? query.unsqueeze(1) : query;
  const Tensor compared = projected_keys.defined() ? projected_keys : project_keys(keys);
  Tensor weights = masked_softmax(score(queries, compared), key_pad_mask, {},  // (B, T, S)
                                  /*in_place=*/false);
  Tensor context = batched_matmul(weights, keys);  // (B, T, Dk)
  if (single_step) return {context.squeeze(1), weights.squeeze(1)};
  return {context, weights};
}

std::optional<std::tuple<Tensor, Tensor>> AttentionImpl::forward_step_in_one_pass(
    const Tensor& query, const Tensor& keys, const Tensor& key_rows, const Tensor& key_pad_mask,
    const Tensor& projected_keys, const Tensor& projected_rows) {
  // Before the query's projection, what rules the kernel out during training.
  if (!fast_kernels_enabled() || query.dim() != 2 || !projected_keys.defined() ||
      (at::GradMode::is_enabled() && query.requires_grad())) {
    return std::nullopt;
  }
  const StepScoring scoring = step_scoring(query, nullptr);
  if (!step_context_applies(scoring.query, projected_keys, scoring.energy, keys, projected_rows,
                            key_rows, key_pad_mask)) {
    return std::nullopt;
  }
  return step_context(scoring.query, projected_keys, scoring.energy, scoring.scale, keys,
                      projected_rows, key_rows, key_pad_mask);
}

std::tuple<Tensor, Tensor> AttentionImpl::forward_training_step(
    const Tensor& query, const TrainingStepContext& source,
    const RecurrentLinear* query_projection) {
  TORCH_CHECK(query.dim() == 2, "a training step's query must be (B, Dq), got ", query.sizes());
  const StepScoring scoring = step_scoring(query, query_projection);
  return source(scoring.query, scoring.energy, scoring.scale);
}

AttentionImpl::StepScoring AttentionImpl::step_scoring(const Tensor& query,
                                                       const RecurrentLinear* query_projection) {
  StepScoring scoring{query, Tensor()};
  switch (options.score()) {
    case AttentionScore::kAdditive:
      scoring.query = query_projection != nullptr ? (*query_projection)(query)
                                                  : apply_linear(query, *query_proj);
      scoring.energy = energy->weight.view({-1});
      break;
    case AttentionScore::kScaledDot:
      scoring.scale = 1.0 / std::sqrt(static_cast<double>(options.query_dim()));
      break;
    case AttentionScore::kGeneral:
    case AttentionScore::kDot:
      break;
  }
  return scoring;
}

}  // namespace nmtzoo
