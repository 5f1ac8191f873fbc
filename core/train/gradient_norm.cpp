#include "core/train/gradient_norm.h"

#include <torch/torch.h>

#include <cmath>

namespace nmtzoo {

double scale_and_clip_gradients(const std::vector<at::Tensor>& parameters, double scale, double max_norm) {
  std::vector<at::Tensor> grads, norms;
  for (const auto& parameter : parameters) {
    if (!parameter.grad().defined()) continue;
    grads.push_back(parameter.grad());
    norms.push_back(grads.back().norm(2));
  }
  if (grads.empty()) return 0.0;
  const double norm = scale * (norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2)).item<double>();
  if (!std::isfinite(norm)) return norm;
  double factor = scale;
  if (max_norm > 0 && norm + 1e-6 > max_norm) factor *= max_norm / (norm + 1e-6);
  torch::NoGradGuard no_grad;
  for (auto& grad : grads) grad.mul_(factor);
  return norm;
}

}  // namespace nmtzoo
