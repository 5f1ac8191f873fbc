// Model FLOPs of a training step, counted analytically from the architecture and the batch
// shapes (multiply-adds x 2; backward = 2 x forward), for model FLOP utilisation figures.
#pragma once

#include <cstdint>
#include <string>

namespace nmtzoo {

struct ModelConfig;

struct BatchShape {
  int64_t rows = 0;        // sentences
  int64_t src_len = 0;     // padded source length, EOS included
  int64_t tgt_len = 0;     // padded target length
  int64_t src_tokens = 0;  // non-pad source tokens
  int64_t tgt_tokens = 0;  // non-pad target tokens (the output projection runs on these only)
};

// Forward FLOPs of one batch for architecture `arch` ("transformer" or "rnn").
double forward_flops(const ModelConfig& model, const std::string& arch, int64_t tgt_vocab,
                     const BatchShape& shape);

inline double training_flops(const ModelConfig& model, const std::string& arch, int64_t tgt_vocab,
                             const BatchShape& shape) {
  return 3.0 * forward_flops(model, arch, tgt_vocab, shape);
}

}  // namespace nmtzoo
