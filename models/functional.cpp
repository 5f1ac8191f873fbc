#include "models/functional.h"

#include <torch/torch.h>

#include <limits>
#include <vector>

#include "kernels/dropout.h"
#include "kernels/int8_linear.h"
#include "kernels/kernels.h"

namespace nmtzoo {

at::Tensor apply_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  Int8Linears* int8 = active_int8_linears();
  if (int8 != nullptr && !at::GradMode::is_enabled() && x.device().is_cpu()) return int8->linear(x, weight, bias);
  return torch::nn::functional::linear(x, weight, bias);
}

at::Tensor apply_linear(const at::Tensor& x, const torch::nn::LinearImpl& layer) { return apply_linear(x, layer.weight, layer.bias); }

at::Tensor apply_dropout(const at::Tensor& x, double p, bool training) {
  if (p <= 0 || !training) return x;
  if (fast_kernels_enabled() && chunked_dropout_applies(x, p)) return chunked_dropout(x, p);
  return torch::nn::functional::dropout(
      x, torch::nn::functional::DropoutFuncOptions().p(p).training(true));
}

at::Tensor masked_softmax(at::Tensor scores, const at::Tensor& key_pad_mask,
                          const at::Tensor& attn_mask, bool in_place) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  auto forbid = [&](const at::Tensor& mask) {
    if (in_place) {
      scores.masked_fill_(mask, minus_inf);
    } else {
      scores = scores.masked_fill(mask, minus_inf);
      in_place = true;  // the copy is ours now
    }
  };
  if (attn_mask.defined()) forbid(attn_mask);
  if (key_pad_mask.defined()) {
    // Broadcast (B, S) over every dimension between batch and keys.
    std::vector<int64_t> shape(static_cast<size_t>(scores.dim()), 1);
    shape.front() = key_pad_mask.size(0);
    shape.back() = key_pad_mask.size(1);
    forbid(key_pad_mask.view(shape));
  }
  return scores.softmax(-1);
}

at::Tensor causal_mask(int64_t length, const c10::Device& device) {
  return torch::ones({length, length}, torch::TensorOptions().dtype(torch::kBool).device(device))
      .triu(1);
}

}  // namespace nmtzoo
