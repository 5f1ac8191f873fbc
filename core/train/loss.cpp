#include "core/train/loss.h"

#include <torch/torch.h>

namespace nmtzoo {

LossSums label_smoothed_nll(const at::Tensor& logits, const at::Tensor& target, double epsilon) {
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1 && logits.size(0) == target.size(0),
              "logits must be (N, V) and target (N), but got ", logits.sizes(), " and ",
              target.sizes());
  // One log-softmax serves both terms; float32 even when the logits come from bf16 autocast.
  at::Tensor log_probs = logits.to(torch::kFloat).log_softmax(-1);
  at::Tensor nll = -log_probs.gather(1, target.unsqueeze(1)).sum();
  LossSums sums;
  sums.nll = nll;
  sums.tokens = target.size(0);
  if (epsilon <= 0) {
    sums.loss = nll;
    return sums;
  }
  const double vocab = static_cast<double>(log_probs.size(1));
  const double other = epsilon / (vocab - 1);
  at::Tensor smooth = -log_probs.sum();  // sum over tokens and the whole vocabulary
  // sum_v q(v) (-log p(v)) with q(ref) = 1 - epsilon and q(v) = epsilon / (V - 1) elsewhere.
  sums.loss = (1.0 - epsilon - other) * nll + other * smooth;
  return sums;
}

}  // namespace nmtzoo
