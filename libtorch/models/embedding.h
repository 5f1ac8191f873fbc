// SPDX-License-Identifier: MIT
// Token embeddings and positional encodings.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "torch_free/archs/options/transformer_options.h"

namespace nmtzoo {

using at::Tensor;

// An embedding table with the padding row fixed at zero, initialised N(0, dim^-1/2) so that,
// scaled by sqrt(dim) as in Vaswani et al., embeddings have unit variance.
torch::nn::Embedding make_token_embedding(int64_t vocab_size, int64_t dim);

// Adds position information to (B, T, E) inputs: the sinusoids of Vaswani et al. (a buffer, no
// parameters) or a learned table.
class PositionalEncodingImpl : public torch::nn::Cloneable<PositionalEncodingImpl> {
 public:
  explicit PositionalEncodingImpl(const PositionalEncodingOptions& options);
  void reset() override;

  // Encodings of positions offset .. offset + length - 1: (length, E).
  Tensor forward(int64_t length, int64_t offset = 0);

  PositionalEncodingOptions options;
  Tensor sinusoids;                       // (max_positions, E) buffer, sinusoidal only
  torch::nn::Embedding learned{nullptr};  // learned only
};
TORCH_MODULE(PositionalEncoding);

}  // namespace nmtzoo
