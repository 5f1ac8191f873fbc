// Small functions shared by the model modules.
#pragma once

#include <ATen/core/Tensor.h>

namespace nmtzoo {

// Dropout with probability p when training, the identity otherwise (no copy).
at::Tensor apply_dropout(const at::Tensor& x, double p, bool training);

}  // namespace nmtzoo
