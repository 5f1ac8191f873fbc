#include "core/search/search_strategy.h"

#include <torch/torch.h>

namespace nmtzoo {

BeamStrategy::BeamStrategy(int64_t beam) : beam_(beam) {
  TORCH_CHECK(beam >= 1, "the beam must hold at least one hypothesis, but got ", beam);
}

StepCandidates BeamStrategy::step(int64_t, const at::Tensor& log_probs, const at::Tensor& scores) {
  const int64_t sentences = log_probs.size(0);
  const int64_t vocab = log_probs.size(2);
  at::Tensor candidates = (scores.unsqueeze(2) + log_probs).view({sentences, beam_ * vocab});
  auto [top_scores, top_indices] = candidates.topk(std::min(2 * beam_, beam_ * vocab), 1);
  return {top_scores, top_indices.div(vocab, "floor"), top_indices.remainder(vocab)};
}

StepCandidates GreedyStrategy::step(int64_t, const at::Tensor& log_probs, const at::Tensor& scores) {
  auto [best, tokens] = log_probs.select(1, 0).max(-1, /*keepdim=*/true);  // (N, 1)
  return {scores + best, torch::zeros_like(tokens), tokens};
}

}  // namespace nmtzoo
