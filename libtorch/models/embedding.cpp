// SPDX-License-Identifier: MIT
#include "libtorch/models/embedding.h"

#include <torch/torch.h>

#include <cmath>

#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {

torch::nn::Embedding make_token_embedding(int64_t vocab_size, int64_t dim) {
  torch::nn::Embedding embedding(torch::nn::EmbeddingOptions(vocab_size, dim).padding_idx(kPadId));
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(dim)));
  embedding->weight[kPadId].zero_();
  return embedding;
}

PositionalEncodingImpl::PositionalEncodingImpl(const PositionalEncodingOptions& options_)
    : options(options_) {
  reset();
}

void PositionalEncodingImpl::reset() {
  const int64_t n = options.max_positions();
  const int64_t dim = options.dim();
  TORCH_CHECK(options.kind() != PositionEncoding::kRelative,
              "relative positions are embedded inside self-attention, not added to the input");
  if (options.kind() == PositionEncoding::kLearned) {
    learned = register_module("learned", torch::nn::Embedding(n, dim));
    torch::NoGradGuard no_grad;
    learned->weight.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(dim)));
    return;
  }
  // PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
  Tensor position = torch::arange(n, torch::kDouble).unsqueeze(1);
  Tensor frequency = torch::exp(torch::arange(0, dim, 2, torch::kDouble) *
                                (-std::log(10000.0) / static_cast<double>(dim)));
  Tensor table = torch::zeros({n, dim}, torch::kDouble);
  table.slice(1, 0, dim, 2) = torch::sin(position * frequency);
  table.slice(1, 1, dim, 2) = torch::cos(position * frequency).narrow(1, 0, dim / 2);
  sinusoids = register_buffer("sinusoids", table.to(torch::kFloat));
}

Tensor PositionalEncodingImpl::forward(int64_t length, int64_t offset) {
  TORCH_CHECK(offset + length <= options.max_positions(), "sequence of ", offset + length,
              " positions exceeds max_positions = ", options.max_positions());
  if (learned) return learned->weight.narrow(0, offset, length);
  return sinusoids.narrow(0, offset, length);
}

}  // namespace nmtzoo
