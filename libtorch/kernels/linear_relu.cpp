// SPDX-License-Identifier: MIT
#include "libtorch/kernels/linear_relu.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/small_sgemm.h"
#include "libtorch/kernels/vector_clones.h"

namespace nmtzoo {
namespace {

// Rows [begin, end) of the (rows, n) product, in place: max(row + bias, 0).
NMTZOO_VECTOR_CLONES
void bias_relu_rows(float* out, const float* bias, int64_t n, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    float* row = out + r * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) row[j] = std::max(row[j] + bias[j], 0.0f);
  }
}

// Rows [begin, end) of the backward: the pre-activation's gradient (g where the output is
// positive, else 0) into grad, and its column sums added to bias_sums. The sums run in float32
// over blocks of rows (in `partial`, n floats) and in float64 across blocks: accumulating every
// element in float64 took 3.7x as long (the conversions), a float32 sum over thousands of rows
// loses digits.
NMTZOO_VECTOR_CLONES
void relu_backward_rows(const float* g, const float* out, int64_t n, int64_t begin, int64_t end,
                        float* grad, float* partial, double* bias_sums) {
  constexpr int64_t kBlockRows = 32;
  for (int64_t block = begin; block < end; block += kBlockRows) {
    std::fill(partial, partial + n, 0.0f);
    for (int64_t r = block; r < std::min(end, block + kBlockRows); ++r) {
      const float* g_row = g + r * n;
      const float* out_row = out + r * n;
      float* grad_row = grad + r * n;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        const float kept = out_row[j] > 0.0f ? g_row[j] : 0.0f;
        grad_row[j] = kept;
        partial[j] += kept;
      }
    }
    for (int64_t j = 0; j < n; ++j) bias_sums[j] += partial[j];
  }
}

class LinearRelu : public torch::autograd::Function<LinearRelu> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& weight, const at::Tensor& bias) {
    const int64_t n = weight.size(0);
    const at::Tensor rows = x.reshape({-1, x.size(-1)});
    at::Tensor out = at::mm(rows, weight.t());
    at::parallel_for(0, out.size(0), rows_per_task(n), [&](int64_t begin, int64_t end) {
      bias_relu_rows(out.data_ptr<float>(), bias.data_ptr<float>(), n, begin, end);
    });
    ctx->save_for_backward({rows, weight, out});
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = n;
    return out.view(sizes);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& rows = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& out = saved[2];
    const int64_t n = out.size(1);
    const at::Tensor g = grads[0].reshape({-1, n}).contiguous();
    at::Tensor grad = at::empty_like(out);
    const int threads = at::get_num_threads();
    std::vector<double> sums(static_cast<size_t>(threads * n), 0.0);
    at::parallel_for(0, out.size(0), rows_per_task(n), [&](int64_t begin, int64_t end) {
      std::vector<float> partial(static_cast<size_t>(n));
      relu_backward_rows(g.data_ptr<float>(), out.data_ptr<float>(), n, begin, end,
                         grad.data_ptr<float>(), partial.data(),
                         sums.data() + at::get_thread_num() * n);
    });
    at::Tensor grad_x, grad_weight, grad_bias;
    if (ctx->needs_input_grad(0)) {
      std::vector<int64_t> sizes = grads[0].sizes().vec();
      sizes.back() = rows.size(1);
      grad_x = at::mm(grad, weight).view(sizes);
    }
    if (ctx->needs_input_grad(1)) grad_weight = contiguous_transpose(at::mm(rows.t(), grad));
    if (ctx->needs_input_grad(2)) {
      grad_bias = at::empty({n}, out.options());
      float* bias_data = grad_bias.data_ptr<float>();
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int t = 0; t < threads; ++t) sum += sums[static_cast<size_t>(t * n + j)];
        bias_data[j] = static_cast<float>(sum);
      }
    }
    return {grad_x, grad_weight, grad_bias};
  }
};

bool float_cpu(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided &&
         t.device().is_cpu();
}

}  // namespace

bool linear_relu_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!fast_kernels_enabled() || !at::GradMode::is_enabled() || at::autocast::is_cpu_enabled())
    return false;
  if (!float_cpu(x) || !float_cpu(weight) || !float_cpu(bias) || x.dim() < 1 || !x.is_contiguous())
    return false;
  return weight.dim() == 2 && bias.dim() == 1 && weight.size(1) == x.size(-1) &&
         bias.size(0) == weight.size(0) && bias.is_contiguous() && weight.size(0) > 0 &&
         x.numel() > 0;
}

at::Tensor linear_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(linear_relu_applies(x, weight, bias),
              "linear_relu takes a contiguous x (..., in), weight (out, in) and bias (out), "
              "float32 on the CPU "
              "under autograd, got ",
              x.sizes(), ", ", weight.sizes(), " and ", bias.sizes());
  return LinearRelu::apply(x, weight, bias);
}

}  // namespace nmtzoo
