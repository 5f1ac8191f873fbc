// SPDX-License-Identifier: MIT
#include "libtorch/models/functional.h"

#include <torch/torch.h>

#include <limits>
#include <vector>

#include "libtorch/kernels/dropout.h"
#include "libtorch/kernels/gru_gates.h"
#include "libtorch/kernels/int8_linear.h"
#include "libtorch/kernels/kernels.h"

namespace nmtzoo {

namespace {

bool int8_products(const at::Tensor& x) {
  return active_int8_linears() != nullptr && !at::GradMode::is_enabled() && x.device().is_cpu();
}

}  // namespace

at::Tensor apply_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (int8_products(x)) return active_int8_linears()->linear(x, weight, bias);
  if (x.dim() > 2 && bias.defined() && x.is_contiguous()) {
    // LibTorch 1.13's linear folds the bias into the product (addmm) for 2-D inputs only: a
    // (B, T, E) input got a product and then a separate pass adding the bias (45 per
    // transformer_small update). As rows of a 2-D input, one addmm.
    // _unsafe_view, as LibTorch's matmul folds: the result is not a view of the 2-D product to
    // autograd, so an in-place op on it (the feed-forward's ReLU) stays in place, without the
    // CopySlices a view's in-place op costs.
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return at::_unsafe_view(torch::nn::functional::linear(x.view({-1, x.size(-1)}), weight, bias),
                            sizes);
  }
  return torch::nn::functional::linear(x, weight, bias);
}

at::Tensor apply_linear(const at::Tensor& x, const torch::nn::LinearImpl& layer) {
  return apply_linear(x, layer.weight, layer.bias);
}

at::Tensor gru_cell(const at::Tensor& input, const at::Tensor& h, torch::nn::GRUCellImpl& cell) {
  if (!int8_products(input)) return cell.forward(input, h);
  return gru_cell_from_input_gates(apply_linear(input, cell.weight_ih, cell.bias_ih), h, cell);
}

std::tuple<at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input, const at::Tensor& h,
                                             const at::Tensor& c, torch::nn::LSTMCellImpl& cell) {
  if (!int8_products(input)) return cell.forward(input, std::make_tuple(h, c));
  return lstm_cell_from_input_gates(apply_linear(input, cell.weight_ih, cell.bias_ih), h, c, cell);
}

at::Tensor gru_cell_from_input_gates(const at::Tensor& input_gates, const at::Tensor& h,
                                     torch::nn::GRUCellImpl& cell) {
  return gru_cell_from_gates(input_gates, apply_linear(h, cell.weight_hh, cell.bias_hh), h);
}

std::tuple<at::Tensor, at::Tensor> lstm_cell_from_input_gates(const at::Tensor& input_gates,
                                                              const at::Tensor& h,
                                                              const at::Tensor& c,
                                                              torch::nn::LSTMCellImpl& cell) {
  return lstm_cell_from_gates(input_gates + apply_linear(h, cell.weight_hh, cell.bias_hh), c);
}

at::Tensor gru_cell_from_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                               const at::Tensor& h) {
  if (gru_gates_applies(input_gates, hidden_gates, h))
    return gru_gates(input_gates, hidden_gates, h);
  // PyTorch's gate order: reset, update, new.
  auto gi = input_gates.chunk(3, 1);
  auto gh = hidden_gates.chunk(3, 1);
  at::Tensor reset = torch::sigmoid(gi[0] + gh[0]);
  at::Tensor update = torch::sigmoid(gi[1] + gh[1]);
  at::Tensor candidate = torch::tanh(gi[2] + reset * gh[2]);
  return candidate + update * (h - candidate);
}

std::tuple<at::Tensor, at::Tensor> lstm_cell_from_gates(const at::Tensor& gates,
                                                        const at::Tensor& c) {
  // PyTorch's gate order: input, forget, cell, output.
  auto chunks = gates.chunk(4, 1);
  at::Tensor c_next =
      torch::sigmoid(chunks[1]) * c + torch::sigmoid(chunks[0]) * torch::tanh(chunks[2]);
  return {torch::sigmoid(chunks[3]) * torch::tanh(c_next), c_next};
}

at::Tensor apply_dropout(const at::Tensor& x, double p, bool training) {
  if (p <= 0 || !training) return x;
  if (fast_kernels_enabled() && chunked_dropout_applies(x, p)) return chunked_dropout(x, p);
  return torch::nn::functional::dropout(
      x, torch::nn::functional::DropoutFuncOptions().p(p).training(true));
}

at::Tensor apply_word_dropout(const at::Tensor& x, double p, bool training) {
  if (p <= 0 || !training) return x;
  auto mask_shape = x.sizes().vec();
  mask_shape.back() = 1;
  // apply_dropout on a (..., 1) mask of ones: its kernel's draws do not depend on the thread count.
  return x * apply_dropout(torch::ones(mask_shape, x.options()), p, training);
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
