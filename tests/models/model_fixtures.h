// SPDX-License-Identifier: MIT
// Tiny models and batches for the model tests: every variant the zoo offers, built through the
// registry exactly as the apps build them.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "libtorch/models/encoder_decoder.h"
#include "torch_free/config/config.h"

namespace nmtzoo::testing {

constexpr int64_t kTinyVocab = 23;

// Names of the tiny variants, e.g. "transformer_post", "rnn_luong_lstm".
const std::vector<std::string>& tiny_variants();
// The run config of a variant (dropout 0, so outputs are deterministic).
RunConfig tiny_config(const std::string& variant);
std::shared_ptr<EncoderDecoder> tiny_model(const std::string& variant, uint64_t seed = 1);

struct TinyBatch {
  at::Tensor src_tokens;    // (B, S), right-padded
  at::Tensor src_pad_mask;  // (B, S)
  at::Tensor tgt_in;        // (B, T) BOS-shifted
  at::Tensor tgt_out;       // (B, T)
};
// Random sequences of the given lengths (EOS added), padded; ids avoid the special tokens.
TinyBatch random_batch(const std::vector<int64_t>& src_lengths,
                       const std::vector<int64_t>& tgt_lengths, uint64_t seed);

// A training step on `batch` (cross-entropy of the model's logits) with the hand-written kernels
// on or off: the loss, then every parameter's gradient (undefined where it has none). `inspect`
// sees the loss before its backward (which kernels' nodes its graph holds).
std::vector<at::Tensor> training_step(
    EncoderDecoder& model, const TinyBatch& batch, bool kernels,
    const std::function<void(const at::Tensor& loss)>& inspect = {});
// Expects two training_step results alike: the same gradients defined, values within the
// tolerances.
void expect_alike(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double rtol,
                  double atol);

}  // namespace nmtzoo::testing
