// SPDX-License-Identifier: MIT
#include "libtorch/kernels/dropout_layer_norm.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "libtorch/kernels/counter_rng.h"
#include "libtorch/kernels/vector_clones.h"

namespace nmtzoo {
namespace {

// Rows per task: a transformer_small row is 1 KiB, so a task covers 16 KiB of each operand.
constexpr int64_t kRowsPerTask = 16;

// The dropout mask of one row of d elements, 1 where kept: the mask chunked_dropout draws for
// the same elements of the same seed.
void row_mask(uint64_t seed, int64_t row, int64_t d, uint32_t threshold, uint8_t* keep) {
  const int64_t first = row * d;
  if (first % 2 == 0 && d % 2 == 0) {
    for (int64_t i = 0; i < d / 2; ++i) {
      const uint64_t bits = counter_rng::pair_bits(seed, first + 2 * i);
      keep[2 * i] = counter_rng::kept(static_cast<uint32_t>(bits), threshold);
      keep[2 * i + 1] = counter_rng::kept(static_cast<uint32_t>(bits >> 32), threshold);
    }
    return;
  }
  for (int64_t j = 0; j < d; ++j) {
    const int64_t f = first + j;
    const uint64_t bits = counter_rng::pair_bits(seed, f - f % 2) >> (32 * (f % 2));
    keep[j] = counter_rng::kept(static_cast<uint32_t>(bits), threshold);
  }
}

// out = (r - mean) * rstd * w + b with r = x + scale keep s (keep null: r = x + s); keeps xhat
// and rstd.
NMTZOO_VECTOR_CLONES
void forward_row(const float* x, const float* s, const uint8_t* keep, float scale, const float* w,
                 const float* b, int64_t d, float eps, float* out, float* xhat, float* rstd_out) {
  float sum = 0.0f;
  if (keep != nullptr) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      const float r = x[j] + (keep[j] != 0 ? scale : 0.0f) * s[j];
      xhat[j] = r;
      sum += r;
    }
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      const float r = x[j] + s[j];
      xhat[j] = r;
      sum += r;
    }
  }
  const float mean = sum / static_cast<float>(d);
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t j = 0; j < d; ++j) {
    const float c = xhat[j] - mean;
    squares += c * c;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(d) + eps);
#pragma omp simd
  for (int64_t j = 0; j < d; ++j) {
    const float normalised = (xhat[j] - mean) * rstd;
    xhat[j] = normalised;
    out[j] = normalised * w[j] + b[j];
  }
  *rstd_out = rstd;
}

// dr = rstd (g w - mean(g w) - xhat mean(g w xhat)); dx = dr, ds = scale keep dr (keep null:
// ds = dr); adds g xhat and g to the partial sums of the weight's and bias's gradients.
NMTZOO_VECTOR_CLONES
void backward_row(const float* g, const float* xhat, float rstd, const uint8_t* keep, float scale,
                  const float* w, int64_t d, float* dx, float* ds, float* grad_w, float* grad_b) {
  float sum = 0.0f, dot = 0.0f;
#pragma omp simd reduction(+ : sum, dot)
  for (int64_t j = 0; j < d; ++j) {
    const float dxhat = g[j] * w[j];
    sum += dxhat;
    dot += dxhat * xhat[j];
    grad_w[j] += g[j] * xhat[j];
    grad_b[j] += g[j];
  }
  const float mean = sum / static_cast<float>(d);
  const float mean_dot = dot / static_cast<float>(d);
  if (keep != nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float dr = rstd * (g[j] * w[j] - mean - xhat[j] * mean_dot);
      dx[j] = dr;
      ds[j] = (keep[j] != 0 ? scale : 0.0f) * dr;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float dr = rstd * (g[j] * w[j] - mean - xhat[j] * mean_dot);
      dx[j] = dr;
      ds[j] = dr;
    }
  }
}

class DropoutAddLayerNorm : public torch::autograd::Function<DropoutAddLayerNorm> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& residual,
                            const at::Tensor& sublayer, double p, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    const at::Tensor x = residual.contiguous();
    const at::Tensor s = sublayer.contiguous();
    const at::Tensor w = weight.contiguous();
    const at::Tensor b = bias.contiguous();
    const int64_t d = x.size(-1);
    const int64_t rows = x.numel() / d;
    const bool dropout = p > 0;
    const uint64_t seed = dropout ? counter_rng::draw_seed() : 0;
    const uint32_t threshold = counter_rng::keep_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    at::Tensor out = at::empty_like(x);
    at::Tensor xhat = at::empty_like(x);
    at::Tensor rstd = at::empty({rows}, x.options());
    // Kept for the backward: a byte per element costs less than drawing the mask again.
    at::Tensor mask =
        at::empty(dropout ? x.sizes() : at::IntArrayRef{0}, x.options().dtype(at::kByte));
    const bool bf16 = s.scalar_type() == at::kBFloat16;
    at::parallel_for(0, rows, kRowsPerTask, [&](int64_t first, int64_t last) {
      std::vector<float> s_row(bf16 ? static_cast<size_t>(d) : 0);
      for (int64_t row = first; row < last; ++row) {
        const float* s_data;
        if (bf16) {
          const c10::BFloat16* in = s.data_ptr<c10::BFloat16>() + row * d;
          for (int64_t j = 0; j < d; ++j) s_row[static_cast<size_t>(j)] = static_cast<float>(in[j]);
          s_data = s_row.data();
        } else {
          s_data = s.data_ptr<float>() + row * d;
        }
        uint8_t* keep = dropout ? mask.data_ptr<uint8_t>() + row * d : nullptr;
        if (dropout) row_mask(seed, row, d, threshold, keep);
        forward_row(x.data_ptr<float>() + row * d, s_data, keep, scale, w.data_ptr<float>(),
                    b.data_ptr<float>(), d, static_cast<float>(eps),
                    out.data_ptr<float>() + row * d, xhat.data_ptr<float>() + row * d,
                    rstd.data_ptr<float>() + row);
      }
    });
    ctx->save_for_backward({xhat, rstd, w, mask});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    ctx->saved_data["sublayer_dtype"] = static_cast<int64_t>(s.scalar_type());
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xhat = saved[0];
    const at::Tensor& rstd = saved[1];
    const at::Tensor& w = saved[2];
    const at::Tensor g = grads[0].to(at::kFloat).contiguous();
    const int64_t d = xhat.size(-1);
    const int64_t rows = xhat.numel() / d;
    const at::Tensor& mask = saved[3];
    const bool dropout = mask.numel() > 0;
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    // The kernel writes both input gradients; one not asked for is dropped afterwards.
    at::Tensor dx = at::empty_like(xhat);
    at::Tensor ds = at::empty_like(xhat);  // float32; cast at the end when the sublayer is bf16
    const int threads = at::get_num_threads();
    at::Tensor partial_w = at::zeros({threads, d}, xhat.options());
    at::Tensor partial_b = at::zeros({threads, d}, xhat.options());
    at::parallel_for(0, rows, kRowsPerTask, [&](int64_t first, int64_t last) {
      const int64_t thread = at::get_thread_num();
      for (int64_t row = first; row < last; ++row) {
        backward_row(g.data_ptr<float>() + row * d, xhat.data_ptr<float>() + row * d,
                     rstd.data_ptr<float>()[row],
                     dropout ? mask.data_ptr<uint8_t>() + row * d : nullptr, scale,
                     w.data_ptr<float>(), d, dx.data_ptr<float>() + row * d,
                     ds.data_ptr<float>() + row * d, partial_w.data_ptr<float>() + thread * d,
                     partial_b.data_ptr<float>() + thread * d);
      }
    });
    const auto sublayer_dtype =
        static_cast<at::ScalarType>(ctx->saved_data["sublayer_dtype"].toInt());
    if (!ctx->needs_input_grad(0)) dx = at::Tensor();
    if (!ctx->needs_input_grad(1)) {
      ds = at::Tensor();
    } else if (sublayer_dtype != at::kFloat) {
      ds = ds.to(sublayer_dtype);
    }
    // needs_input_grad counts the tensor arguments only: weight is the third, bias the fourth.
    return {dx,
            ds,
            at::Tensor(),
            ctx->needs_input_grad(2) ? partial_w.sum(0) : at::Tensor(),
            ctx->needs_input_grad(3) ? partial_b.sum(0) : at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

bool dropout_add_layer_norm_applies(const at::Tensor& residual, const at::Tensor& sublayer,
                                    const at::Tensor& weight, const at::Tensor& bias) {
  auto cpu = [](const at::Tensor& t, at::ScalarType dtype) {
    return t.device().is_cpu() && t.scalar_type() == dtype;
  };
  return residual.dim() >= 1 && residual.numel() > 0 && cpu(residual, at::kFloat) &&
         (cpu(sublayer, at::kFloat) || cpu(sublayer, at::kBFloat16)) &&
         sublayer.sizes() == residual.sizes() && weight.defined() && bias.defined() &&
         cpu(weight, at::kFloat) && cpu(bias, at::kFloat) && weight.dim() == 1 && bias.dim() == 1 &&
         weight.size(0) == residual.size(-1) && bias.size(0) == residual.size(-1);
}

at::Tensor dropout_add_layer_norm(const at::Tensor& residual, const at::Tensor& sublayer, double p,
                                  const at::Tensor& weight, const at::Tensor& bias, double eps) {
  TORCH_CHECK(
      dropout_add_layer_norm_applies(residual, sublayer, weight, bias),
      "dropout_add_layer_norm: operands it does not take (see dropout_add_layer_norm_applies)");
  TORCH_CHECK(p >= 0 && p < 1, "dropout_add_layer_norm: p must be in [0, 1), but got ", p);
  return DropoutAddLayerNorm::apply(residual, sublayer, p, weight, bias, eps);
}

}  // namespace nmtzoo
