// SPDX-License-Identifier: MIT
#include "libtorch/kernels/smoothed_cross_entropy.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "libtorch/kernels/vector_clones.h"
#include "libtorch/kernels/vector_math.h"

namespace nmtzoo {
namespace {

struct RowSums {
  float max, sum;
};

NMTZOO_VECTOR_CLONES
RowSums max_and_sum(const float* row, int64_t v) {
  float max = -std::numeric_limits<float>::infinity(), sum = 0.0f;
#pragma omp simd reduction(max : max) reduction(+ : sum)
  for (int64_t j = 0; j < v; ++j) {
    max = row[j] > max ? row[j] : max;
    sum += row[j];
  }
  return {max, sum};
}

NMTZOO_VECTOR_CLONES
float exp_shifted_row(const float* row, float max, int64_t v, float* out) {
  return exp_shifted(row, max, v, out);
}

// p - q from e = e^(logit - max): e / sum - other; the column sums into bias (if not null).
NMTZOO_VECTOR_CLONES
void probabilities_minus_smoothed(float* e, float inverse_sum, float other, int64_t v,
                                  float* bias) {
  if (bias != nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < v; ++j) {
      const float g = e[j] * inverse_sum - other;
      e[j] = g;
      bias[j] += g;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < v; ++j) e[j] = e[j] * inverse_sum - other;
  }
}

}  // namespace

void smoothed_cross_entropy_rows(const at::Tensor& logits, const at::Tensor& target,
                                 double on_target, double other, const at::Tensor& row_loss,
                                 const at::Tensor& row_nll, const at::Tensor& grad,
                                 const at::Tensor& grad_bias) {
  TORCH_CHECK(
      logits.dim() == 2 && logits.scalar_type() == at::kFloat && logits.is_contiguous() &&
          logits.device().is_cpu(),
      "smoothed_cross_entropy_rows: logits must be contiguous (R, V) float32 on CPU, but got ",
      logits.sizes(), " ", logits.scalar_type());
  const int64_t rows = logits.size(0), v = logits.size(1);
  TORCH_CHECK(target.dim() == 1 && target.size(0) == rows && target.scalar_type() == at::kLong,
              "smoothed_cross_entropy_rows: target must be (R) int64");
  TORCH_CHECK(row_loss.numel() == rows && row_nll.numel() == rows &&
                  row_loss.scalar_type() == at::kDouble && row_nll.scalar_type() == at::kDouble &&
                  row_loss.is_contiguous() && row_nll.is_contiguous(),
              "smoothed_cross_entropy_rows: row_loss and row_nll must be contiguous (R) float64");
  TORCH_CHECK(!grad.defined() || (grad.sizes() == logits.sizes() &&
                                  grad.scalar_type() == at::kFloat && grad.is_contiguous()),
              "smoothed_cross_entropy_rows: grad must be contiguous (R, V) float32");
  TORCH_CHECK(
      !grad_bias.defined() || (grad.defined() && grad_bias.numel() == v &&
                               grad_bias.scalar_type() == at::kFloat && grad_bias.is_contiguous()),
      "smoothed_cross_entropy_rows: grad_bias must be contiguous (V) float32, with grad");
  const float* in = logits.data_ptr<float>();
  const int64_t* tokens = target.data_ptr<int64_t>();
  double* loss = row_loss.data_ptr<double>();
  double* nll = row_nll.data_ptr<double>();
  float* out = grad.defined() ? grad.data_ptr<float>() : nullptr;
  const int threads = at::get_num_threads();
  // Per-thread column sums of p - q, added to grad_bias at the end.
  at::Tensor partial_bias =
      grad_bias.defined() ? at::zeros({threads, v}, logits.options()) : at::Tensor();
  at::parallel_for(0, rows, 1, [&](int64_t first, int64_t last) {
    std::vector<float> scratch(out == nullptr ? static_cast<size_t>(v) : 0);
    float* bias = partial_bias.defined() ? partial_bias.data_ptr<float>() + at::get_thread_num() * v
                                         : nullptr;
    for (int64_t i = first; i < last; ++i) {
      const float* row = in + i * v;
      const int64_t t = tokens[i];
      TORCH_CHECK(t >= 0 && t < v, "smoothed_cross_entropy_rows: target ", t,
                  " outside the vocabulary of ", v);
      const RowSums sums = max_and_sum(row, v);
      const float target_logit = row[t];
      float* e = out != nullptr ? out + i * v : scratch.data();
      const float exp_sum = exp_shifted_row(row, sums.max, v, e);
      const double log_sum_exp =
          static_cast<double>(sums.max) + std::log(static_cast<double>(exp_sum));
      nll[i] = log_sum_exp - target_logit;
      // sum_v log p_v = sum_v logit_v - V * log-sum-exp
      loss[i] = on_target * nll[i] - other * (sums.sum - static_cast<double>(v) * log_sum_exp);
      if (out == nullptr) continue;
      probabilities_minus_smoothed(e, 1.0f / exp_sum, static_cast<float>(other), v, bias);
      e[t] -= static_cast<float>(on_target);
      if (bias != nullptr) bias[t] -= static_cast<float>(on_target);
    }
  });
  if (partial_bias.defined()) grad_bias.add_(partial_bias.sum(0));
}

}  // namespace nmtzoo
