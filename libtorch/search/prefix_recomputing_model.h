// SPDX-License-Identifier: MIT
// An EncoderDecoder adapter that decodes without an incremental cache: each step reruns the
// wrapped model's teacher-forced forward() over the whole prefix, as naive tutorials do. For
// benchmarks (what the cache saves) and tests (cached decoding must give the same output); it
// plugs into the one search like any model.
#pragma once

#include <memory>

#include "libtorch/models/encoder_decoder.h"

namespace nmtzoo {

class PrefixRecomputingModel : public EncoderDecoder {
 public:
  // Registers `model` as its child "model", so train()/eval()/to() reach it.
  explicit PrefixRecomputingModel(std::shared_ptr<EncoderDecoder> model);

  // State: the source tokens and mask (kSource) and the prefix so far (kStep).
  DecoderState encode(const Tensor& src_tokens, const Tensor& src_pad_mask) override;
  Tensor decode_step(const Tensor& prev_tokens, DecoderState& state) override;
  Tensor features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                  const Tensor& tgt_in) override;
  Tensor output_layer(const Tensor& features) override;
  int64_t max_positions() const override { return model_->max_positions(); }

 private:
  std::shared_ptr<EncoderDecoder> model_;
};

}  // namespace nmtzoo
