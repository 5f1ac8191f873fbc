#include "models/functional.h"

#include <torch/torch.h>

namespace nmtzoo {

at::Tensor apply_dropout(const at::Tensor& x, double p, bool training) {
  if (p <= 0 || !training) return x;
  return torch::nn::functional::dropout(
      x, torch::nn::functional::DropoutFuncOptions().p(p).training(true));
}

}  // namespace nmtzoo
