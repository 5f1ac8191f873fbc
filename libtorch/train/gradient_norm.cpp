// SPDX-License-Identifier: MIT
#include "libtorch/train/gradient_norm.h"

#include <torch/torch.h>

namespace nmtzoo {

GradientScaling gradient_scaling(const std::vector<at::Tensor>& parameters, double scale,
                                 double max_norm) {
  std::vector<at::Tensor> norms;
  for (const auto& parameter : parameters) {
    if (parameter.grad().defined()) norms.push_back(parameter.grad().norm(2));
  }
  GradientScaling scaling;
  scaling.factor = scale;
  if (norms.empty()) return scaling;
  scaling.norm =
      scale * (norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2)).item<double>();
  if (max_norm > 0 && scaling.norm + 1e-6 > max_norm)
    scaling.factor *= max_norm / (scaling.norm + 1e-6);
  return scaling;
}

}  // namespace nmtzoo
