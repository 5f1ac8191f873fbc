// SPDX-License-Identifier: MIT
#include "libtorch/kernels/gru_gates.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>

#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/vector_clones.h"
#include "libtorch/kernels/vector_math.h"

namespace nmtzoo {
namespace {

// Rows [begin, end) of the forward; `saved` (B, 3n) gets r, z and c for the backward.
NMTZOO_VECTOR_CLONES
void forward_rows(const float* input_gates, const float* hidden_gates, const float* h, int64_t n,
                  int64_t begin, int64_t end, float* out, float* saved) {
  for (int64_t b = begin; b < end; ++b) {
    const float* gi = input_gates + b * 3 * n;
    const float* gh = hidden_gates + b * 3 * n;
    const float* h_row = h + b * n;
    float* out_row = out + b * n;
    float* r = saved + b * 3 * n;
    float* z = r + n;
    float* c = z + n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      r[j] = sigmoid_by_exp(gi[j] + gh[j]);
      z[j] = sigmoid_by_exp(gi[n + j] + gh[n + j]);
      c[j] = tanh_by_exp(gi[2 * n + j] + r[j] * gh[2 * n + j]);
      out_row[j] = c[j] + z[j] * (h_row[j] - c[j]);
    }
  }
}

// Rows [begin, end) of the backward from the output's gradient g.
NMTZOO_VECTOR_CLONES
void backward_rows(const float* g, const float* saved, const float* hidden_gates, const float* h,
                   int64_t n, int64_t begin, int64_t end, float* grad_input_gates,
                   float* grad_hidden_gates, float* grad_h) {
  for (int64_t b = begin; b < end; ++b) {
    const float* g_row = g + b * n;
    const float* r = saved + b * 3 * n;
    const float* z = r + n;
    const float* c = z + n;
    const float* gh_new = hidden_gates + b * 3 * n + 2 * n;
    const float* h_row = h + b * n;
    float* gi = grad_input_gates + b * 3 * n;
    float* gh = grad_hidden_gates + b * 3 * n;
    float* gh_row = grad_h + b * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const float grad_c = g_row[j] * (1.0f - z[j]) * (1.0f - c[j] * c[j]);
      const float grad_z = g_row[j] * (h_row[j] - c[j]) * z[j] * (1.0f - z[j]);
      const float grad_r = grad_c * gh_new[j] * r[j] * (1.0f - r[j]);
      gi[j] = grad_r;
      gh[j] = grad_r;
      gi[n + j] = grad_z;
      gh[n + j] = grad_z;
      gi[2 * n + j] = grad_c;
      gh[2 * n + j] = grad_c * r[j];
      gh_row[j] = g_row[j] * z[j];
    }
  }
}

class GruGates : public torch::autograd::Function<GruGates> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input_gates,
                            const at::Tensor& hidden_gates, const at::Tensor& h) {
    const at::Tensor gi = input_gates.contiguous(), gh = hidden_gates.contiguous(),
                     h_rows = h.contiguous();
    const int64_t batch = h_rows.size(0), n = h_rows.size(1);
    at::Tensor out = at::empty_like(h_rows);
    at::Tensor saved = at::empty_like(gi);
    at::parallel_for(0, batch, rows_per_task(3 * n), [&](int64_t begin, int64_t end) {
      forward_rows(gi.data_ptr<float>(), gh.data_ptr<float>(), h_rows.data_ptr<float>(), n, begin,
                   end, out.data_ptr<float>(), saved.data_ptr<float>());
    });
    ctx->save_for_backward({saved, gh, h_rows});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor g = grads[0].contiguous();
    const int64_t batch = g.size(0), n = g.size(1);
    at::Tensor grad_input_gates = at::empty_like(saved[0]);
    at::Tensor grad_hidden_gates = at::empty_like(saved[0]);
    at::Tensor grad_h = at::empty_like(g);
    at::parallel_for(0, batch, rows_per_task(3 * n), [&](int64_t begin, int64_t end) {
      backward_rows(g.data_ptr<float>(), saved[0].data_ptr<float>(), saved[1].data_ptr<float>(),
                    saved[2].data_ptr<float>(), n, begin, end, grad_input_gates.data_ptr<float>(),
                    grad_hidden_gates.data_ptr<float>(), grad_h.data_ptr<float>());
    });
    return {grad_input_gates, grad_hidden_gates, grad_h};
  }
};

bool float_cpu_rows(const at::Tensor& t, int64_t columns) {
  return t.defined() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided &&
         t.device().is_cpu() && t.dim() == 2 && t.size(1) == columns && t.stride(1) == 1;
}

}  // namespace

bool gru_gates_applies(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                       const at::Tensor& h) {
  if (!fast_kernels_enabled() || !at::GradMode::is_enabled() || at::autocast::is_cpu_enabled())
    return false;
  if (!h.defined() || h.dim() != 2) return false;
  const int64_t n = h.size(1);
  return float_cpu_rows(input_gates, 3 * n) && float_cpu_rows(hidden_gates, 3 * n) &&
         float_cpu_rows(h, n) && input_gates.size(0) == h.size(0) &&
         hidden_gates.size(0) == h.size(0);
}

at::Tensor gru_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                     const at::Tensor& h) {
  TORCH_CHECK(gru_gates_applies(input_gates, hidden_gates, h),
              "gru_gates takes input and hidden gates (B, 3n) and h (B, n), float32 on the CPU "
              "under autograd, got ",
              input_gates.sizes(), ", ", hidden_gates.sizes(), " and ", h.sizes());
  return GruGates::apply(input_gates, hidden_gates, h);
}

}  // namespace nmtzoo
