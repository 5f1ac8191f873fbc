// SPDX-License-Identifier: MIT
#include "libtorch/kernels/batched_matmul.h"

#include <torch/torch.h>

#include "libtorch/kernels/onednn_matmul.h"

namespace nmtzoo {

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, bool transpose_a,
                          bool transpose_b) {
  TORCH_CHECK(a.dim() >= 3 && a.dim() == b.dim(),
              "batched_matmul needs two tensors of the same "
              "rank >= 3, but got ",
              a.sizes(), " and ", b.sizes());
  TORCH_CHECK(!(transpose_a && transpose_b), "batched_matmul: transpose one operand at most");
  install_onednn_matmul();
  // Transposed operands stay views: the bmm kernel multiplies column-major matrices as they are.
  return torch::matmul(transpose_a ? a.transpose(-2, -1) : a,
                       transpose_b ? b.transpose(-2, -1) : b);
}

}  // namespace nmtzoo
