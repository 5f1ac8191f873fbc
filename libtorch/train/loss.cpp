// SPDX-License-Identifier: MIT
#include "libtorch/train/loss.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/torch.h>

#include <algorithm>

#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/small_sgemm.h"
#include "libtorch/kernels/smoothed_cross_entropy.h"
#include "libtorch/runtime/runtime.h"

namespace nmtzoo {
namespace {

// The loss's own backward() passes grad_loss 1, where grad * grad_loss would be a pass over an
// (N, V), (N, d) or (V, d) gradient for nothing.
bool is_one(const at::Tensor& grad_loss) {
  return grad_loss.device().is_cpu() && grad_loss.numel() == 1 && grad_loss.item<double>() == 1.0;
}

// grad * grad_loss, in place.
at::Tensor times(at::Tensor grad, const at::Tensor& grad_loss) {
  return is_one(grad_loss) ? grad : grad.mul_(grad_loss);
}

// grad * grad_loss, leaving grad (saved for the backward pass, which may run again) as it is.
at::Tensor scaled(const at::Tensor& grad, const at::Tensor& grad_loss) {
  return is_one(grad_loss) ? grad : grad * grad_loss;
}

// The smoothed target distribution q: `on_target` + `other` on the reference, `other` on each of
// the V - 1 other tokens, so that loss_i = -sum_v q_v log p_iv = on_target * nll_i
// - other * sum_v log p_iv, and its gradient with respect to the logits is p_i - q.
struct Smoothing {
  double other = 0;
  double on_target = 1;
};

Smoothing smoothing(int64_t vocab, double epsilon) {
  Smoothing s;
  s.other = epsilon > 0 ? epsilon / (static_cast<double>(vocab) - 1) : 0.0;
  s.on_target = 1.0 - epsilon - s.other;
  return s;
}

// Label-smoothed cross-entropy in one autograd node. The forward pass is one log_softmax and
// two reductions, the backward pass one in-place exp over the saved log-probabilities, instead of
// LibTorch's chain of log_softmax, gather, sum and their backwards (each a pass over the N x V
// logits, plus an N x V zero-filled scatter). Broadcast (N, V) - (N, 1) arithmetic is avoided: in
// LibTorch 1.13 on this CPU it ran at a tenth of the speed of the softmax kernels.
class SmoothedCrossEntropy : public torch::autograd::Function<SmoothedCrossEntropy> {
 public:
  // Returns (smoothed loss sum, nll sum); only the first is differentiated.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& logits, const at::Tensor& target,
                                                double epsilon) {
    const Smoothing s = smoothing(logits.size(1), epsilon);
    at::Tensor log_probs = logits.log_softmax(1);  // (N, V)
    at::Tensor nll = log_probs.gather(1, target.unsqueeze(1)).sum().neg();
    at::Tensor loss = nll * s.on_target;  // a tensor of its own: nll is not differentiable
    if (s.other > 0) loss -= s.other * log_probs.sum();
    ctx->save_for_backward({log_probs, target});
    ctx->saved_data["other"] = s.other;
    ctx->saved_data["on_target"] = s.on_target;
    ctx->mark_non_differentiable({nll});
    return {loss, nll};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& target = saved[1];
    const double other = ctx->saved_data["other"].toDouble();
    const double on_target = ctx->saved_data["on_target"].toDouble();
    // The saved log-probabilities are not needed after this, so they become the gradient in place.
    at::Tensor grad = saved[0].exp_();  // softmax
    if (other > 0) grad.sub_(other);
    grad.scatter_add_(1, target.unsqueeze(1),
                      torch::full({target.size(0), 1}, -on_target, grad.options()));
    return {times(grad, grads[0]), at::Tensor(), at::Tensor()};
  }
};

// Rows of logits per chunk of the fused projection and loss: a chunk's float32 logits fill about
// 2 MiB, so the softmax and the gradient read them from cache right after the product wrote them.
// A multiple of 16 rows: oneDNN's sgemm multiplies 64 x 8000 x 256 at 162 GFLOP/s and 65 rows at
// 150 (one thread, this machine's ceiling 158-160).
int64_t chunk_rows(int64_t vocab) {
  return std::max<int64_t>(16, (int64_t{2} << 20) / (4 * vocab) / 16 * 16);
}

struct ChunkedLoss {
  at::Tensor loss, nll;  // float32 scalars
  // With `keep_gradient`, the gradients of the loss (for a grad_loss of 1): float32 products give
  // those of the features and the weight; other dtypes the (N, V) gradient p - q in their dtype,
  // which the backward pass multiplies into them.
  at::Tensor grad_features, grad_weight;
  at::Tensor grad_logits;
  at::Tensor grad_bias;  // (V) float32, sum over rows of p - q, when there is a bias
};

// loss and nll of logits = h w^T + b (h, w, b in the products' dtype), a chunk of rows at a
// time, and with `keep_gradient` the gradients. Per chunk: one product, then
// smoothed_cross_entropy_rows (libtorch/kernels/smoothed_cross_entropy.h) reads each row from cache
// for the log-sum-exp, the row sum and p - q. In float32, a block of two chunks' p - q is then
// multiplied into the features' and the weight's gradients while it is still in cache (the backward
// pass's two products, done here): the (N, V) gradient is never written to memory and read back
// twice, 20 ms less per 3,000-token update on this machine (1 thread). A block, not a chunk: the
// weight's gradient sums over the block's rows, and 128 rows keep its (V, d) accumulator's
// traffic small against the product.
ChunkedLoss chunked_projected_loss(const at::Tensor& h, const at::Tensor& w, const at::Tensor& b,
                                   const at::Tensor& target, const Smoothing& s, bool keep_gradient,
                                   bool needs_features_grad, bool needs_weight_grad) {
  const int64_t n = h.size(0);
  const int64_t vocab = w.size(0);
  const bool float_products = h.scalar_type() == at::kFloat;
  // oneDNN multiplies a chunk's few rows by a row-major w^T at 146-152 GFLOP/s and by w's
  // transposed view at 122-125 (65 x 8000 x 256 chunks, one thread): copying w^T once per call
  // (8 MB; 2.2 ms) saves ~15 ms of products.
  const at::Tensor wt = float_products ? contiguous_transpose(w) : w.t();
  const auto float_options = h.options().dtype(at::kFloat);
  at::Tensor row_loss = at::empty({n}, float_options.dtype(at::kDouble));
  at::Tensor row_nll = at::empty({n}, float_options.dtype(at::kDouble));
  ChunkedLoss out;
  const bool gradients_here = keep_gradient && float_products;
  const int64_t rows = chunk_rows(vocab);
  const int64_t block_rows = gradients_here ? 2 * rows : rows;
  at::Tensor block_grad;  // gradients_here: a block's p - q
  if (gradients_here) {
    block_grad = at::empty({std::min(block_rows, n), vocab}, float_options);
    if (needs_features_grad) out.grad_features = at::empty_like(h);
    if (needs_weight_grad)
      out.grad_weight = at::empty_like(w);  // the first block's product overwrites it
  } else if (keep_gradient) {
    out.grad_logits = at::empty({n, vocab}, h.options());
  }
  if (keep_gradient && b.defined()) out.grad_bias = at::zeros({vocab}, float_options);
  for (int64_t b0 = 0; b0 < n; b0 += block_rows) {
    const int64_t block = std::min(block_rows, n - b0);
    for (int64_t r0 = b0; r0 < b0 + block; r0 += rows) {
      const int64_t c = std::min(rows, b0 + block - r0);
      const at::Tensor hc = h.narrow(0, r0, c);
      at::Tensor logits = b.defined() ? at::addmm(b, hc, wt) : at::mm(hc, wt);
      if (!float_products) logits = logits.to(at::kFloat);
      at::Tensor grad;
      if (gradients_here) {
        grad = block_grad.narrow(0, r0 - b0, c);
      } else if (keep_gradient) {
        grad = logits;  // bf16 products: p - q in place, then cast
      }
      smoothed_cross_entropy_rows(logits, target.narrow(0, r0, c), s.on_target, s.other,
                                  row_loss.narrow(0, r0, c), row_nll.narrow(0, r0, c), grad,
                                  out.grad_bias);
      if (keep_gradient && !float_products) out.grad_logits.narrow(0, r0, c).copy_(grad);
    }
    if (!gradients_here) continue;
    const at::Tensor g = block_grad.narrow(0, 0, block);
    if (needs_features_grad) {
      at::Tensor grad_features_block = out.grad_features.narrow(0, b0, block);
      at::mm_out(grad_features_block, g, w);
    }
    if (needs_weight_grad)
      out.grad_weight.addmm_(g.t(), h.narrow(0, b0, block), /*beta=*/b0 == 0 ? 0 : 1);
  }
  out.loss = row_loss.sum().to(at::kFloat);
  out.nll = row_nll.sum().to(at::kFloat);
  return out;
}

// The products' dtype of the fused loss: bf16 under training.bf16 (as CPU autocast would run the
// output layer), else the weight's.
at::ScalarType products_dtype(const at::Tensor& weight, bool bf16) {
  return bf16 ? at::kBFloat16 : weight.scalar_type();
}

at::Tensor cast_or_undefined(const at::Tensor& t, at::ScalarType dtype) {
  return t.defined() ? t.to(dtype) : t;
}

// The vocabulary projection and the label-smoothed cross-entropy in one autograd node
// (Liger-Kernel's and Cut Cross-Entropy's "fused linear cross-entropy", done for CPU caches):
// the (N, V) logits are never written to memory, and the forward pass leaves behind only the
// gradient p - q, which the backward pass multiplies into the two products of the layer's
// gradient. Replaces the unfused path's writes and reads of the logits, its log_softmax, sums and
// the backward's exp, subtraction and scaling (each a pass over 100+ MB at 3,000-token batches).
class ProjectedSmoothedCrossEntropy
    : public torch::autograd::Function<ProjectedSmoothedCrossEntropy> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& features,
                                                const at::Tensor& weight, const at::Tensor& bias,
                                                const at::Tensor& target, double epsilon,
                                                bool bf16) {
    const at::ScalarType dtype = products_dtype(weight, bf16);
    const at::Tensor h = features.to(dtype).contiguous();
    const at::Tensor w = weight.to(dtype);
    const at::Tensor b = bias.numel() > 0 ? bias.to(dtype) : at::Tensor();  // empty: no bias
    ChunkedLoss r = chunked_projected_loss(h, w, b, target, smoothing(weight.size(0), epsilon),
                                           /*keep_gradient=*/true, features.requires_grad(),
                                           weight.requires_grad());
    if (r.grad_logits.defined()) {
      ctx->save_for_backward({r.grad_logits, h, w, r.grad_bias});
    } else {
      ctx->save_for_backward({r.grad_features, r.grad_weight, r.grad_bias});
    }
    ctx->saved_data["features_dtype"] = static_cast<int64_t>(features.scalar_type());
    ctx->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    ctx->mark_non_differentiable({r.nll});
    return {r.loss, r.nll};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& grad_loss = grads[0];
    const auto features_dtype =
        static_cast<at::ScalarType>(ctx->saved_data["features_dtype"].toInt());
    const auto weight_dtype = static_cast<at::ScalarType>(ctx->saved_data["weight_dtype"].toInt());
    at::Tensor grad_features, grad_weight, grad_bias;
    if (saved.size() == 3) {  // computed in the forward pass (float32)
      if (ctx->needs_input_grad(0) && saved[0].defined())
        grad_features = scaled(saved[0], grad_loss);
      if (ctx->needs_input_grad(1) && saved[1].defined()) grad_weight = scaled(saved[1], grad_loss);
    } else {
      const at::Tensor& grad_logits = saved[0];
      if (ctx->needs_input_grad(0)) {
        grad_features = times(at::mm(grad_logits, saved[2]).to(features_dtype), grad_loss);
      }
      if (ctx->needs_input_grad(1)) {
        grad_weight = times(at::mm(grad_logits.t(), saved[1]).to(weight_dtype), grad_loss);
      }
    }
    const at::Tensor& saved_grad_bias = saved.back();
    if (ctx->needs_input_grad(2) && saved_grad_bias.defined())
      grad_bias = scaled(saved_grad_bias, grad_loss);
    return {grad_features, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

bool fused_projection_applies(const at::Tensor& features, const at::Tensor& weight,
                              const at::Tensor& bias) {
  auto cpu_float = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat;
  };
  return fast_kernels_enabled() && features.dim() == 2 && cpu_float(features) &&
         cpu_float(weight) && (!bias.defined() || cpu_float(bias));
}

}  // namespace

LossSums label_smoothed_nll(const at::Tensor& logits, const at::Tensor& target, double epsilon) {
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1 && logits.size(0) == target.size(0),
              "logits must be (N, V) and target (N), but got ", logits.sizes(), " and ",
              target.sizes());
  // float32 even when the logits come from bf16 autocast.
  auto outputs = SmoothedCrossEntropy::apply(logits.to(torch::kFloat), target, epsilon);
  LossSums sums;
  sums.loss = outputs[0];
  sums.nll = outputs[1];
  sums.tokens = target.size(0);
  return sums;
}

LossSums projected_label_smoothed_nll(const at::Tensor& features, const at::Tensor& weight,
                                      const at::Tensor& bias, const at::Tensor& target,
                                      double epsilon, bool bf16) {
  TORCH_CHECK(features.dim() == 2 && weight.dim() == 2 && target.dim() == 1 &&
                  features.size(0) == target.size(0) && features.size(1) == weight.size(1) &&
                  (!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0))),
              "features must be (N, F), weight (V, F), bias (V) and target (N), but got ",
              features.sizes(), ", ", weight.sizes(), ", ",
              bias.defined() ? bias.sizes() : at::IntArrayRef{}, " and ", target.sizes());
  if (!fused_projection_applies(features, weight, bias)) {
    at::Tensor logits;
    {
      CpuAutocast autocast(bf16);
      logits = at::linear(features, weight, bias);
    }
    return label_smoothed_nll(logits, target, epsilon);
  }
  // The products' dtypes are chosen here, not by an enclosing autocast.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCPU);
  LossSums sums;
  sums.tokens = target.size(0);
  const bool needs_gradient =
      at::GradMode::is_enabled() && (features.requires_grad() || weight.requires_grad() ||
                                     (bias.defined() && bias.requires_grad()));
  if (!needs_gradient) {  // validation: no (N, V) gradient kept
    const at::ScalarType dtype = products_dtype(weight, bf16);
    ChunkedLoss r = chunked_projected_loss(features.to(dtype).contiguous(), weight.to(dtype),
                                           cast_or_undefined(bias, dtype), target,
                                           smoothing(weight.size(0), epsilon),
                                           /*keep_gradient=*/false, false, false);
    sums.loss = r.loss;
    sums.nll = r.nll;
    return sums;
  }
  // An undefined tensor cannot be an input of a custom autograd function in LibTorch 1.13: no
  // bias is passed as an empty one.
  const at::Tensor bias_or_empty = bias.defined() ? bias : at::empty({0}, weight.options());
  auto outputs =
      ProjectedSmoothedCrossEntropy::apply(features, weight, bias_or_empty, target, epsilon, bf16);
  sums.loss = outputs[0];
  sums.nll = outputs[1];
  return sums;
}

}  // namespace nmtzoo
