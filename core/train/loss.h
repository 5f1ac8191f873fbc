// Label-smoothed cross-entropy, apart from the models (fairseq's criterion).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmtzoo {

struct LossSums {
  at::Tensor loss;     // scalar: summed label-smoothed loss (what is minimised)
  at::Tensor nll;      // scalar: summed negative log-likelihood (for perplexity)
  int64_t tokens = 0;  // target tokens summed over; the trainer divides once per update
};

// logits (N, V) of N real target tokens, target (N). With epsilon > 0 the target distribution
// puts 1 - epsilon on the reference and spreads epsilon evenly over the other V - 1 tokens.
LossSums label_smoothed_nll(const at::Tensor& logits, const at::Tensor& target, double epsilon);

}  // namespace nmtzoo
