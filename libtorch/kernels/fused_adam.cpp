// SPDX-License-Identifier: MIT
#include "libtorch/kernels/fused_adam.h"

#include <ATen/Parallel.h>
#include <ATen/cpu/vec/vec.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "libtorch/kernels/avx512.h"
#include "libtorch/kernels/kernels.h"

namespace nmtzoo {
namespace {

using Vec = at::vec::Vectorized<float>;
using LossClosure = torch::optim::Optimizer::LossClosure;

// Elements per parallel work unit: 16,384 floats of each of the four streams (parameter,
// gradient, two moments) make 256 KiB, about one core's L2. Smaller tensors run on the caller's
// thread. Each element's result depends on that element alone, so any thread count gives the
// same bits.
constexpr int64_t kAdamChunk = 16384;

// One parameter's step constants, each rounded to float where LibTorch 1.13 rounds it: the
// optimizer computes them in double and the ATen kernel converts the Scalar (or the wrapped
// double scalar tensor) to float.
struct StepScalars {
  bool scale_gradient = false;   // grad.mul_(factor) first
  float gradient_factor = 1;     //   (float)factor
  bool decoupled_decay = false;  // AdamW with weight_decay != 0: p.mul_(1 - lr * wd) first
  float decay = 1;               //   (float)(1 - lr * wd)
  bool coupled_decay = false;    // Adam with weight_decay != 0: grad = grad.add(p, wd)
  float weight_decay = 0;        //   (float)wd
  float beta1 = 0, one_minus_beta1 = 0, beta2 = 0, one_minus_beta2 = 0;
  float sqrt_bias_correction2 = 1;  // (float)sqrt(1 - beta2^step)
  float eps = 0;
  float neg_step_size = 0;  // (float)(-lr / (1 - beta1^step))
};

#if NMTZOO_HAS_AVX512_PATH
// fused_adam_update's elements [begin, end) where the CPU has AVX-512: the same operators in the
// same order, and the multiply-adds fused where LibTorch's AVX-512 kernels fuse them (add with
// alpha). Why by hand: this file's Vectorized<float> is the baseline build's, whose sqrt and
// division run element by element; the step was 26 ms of a 1.16 s Transformer update on 7.6 M
// parameters, bound by them rather than by memory.
NMTZOO_AVX512 void fused_adam_update_avx512(float* param, const float* grad, float* exp_avg,
                                            float* exp_avg_sq, int64_t begin, int64_t end,
                                            const StepScalars& s) {
  const __m512 gradient_factor = _mm512_set1_ps(s.gradient_factor), decay = _mm512_set1_ps(s.decay),
               weight_decay = _mm512_set1_ps(s.weight_decay), beta1 = _mm512_set1_ps(s.beta1),
               one_minus_beta1 = _mm512_set1_ps(s.one_minus_beta1), beta2 = _mm512_set1_ps(s.beta2),
               one_minus_beta2 = _mm512_set1_ps(s.one_minus_beta2),
               sqrt_bias_correction2 = _mm512_set1_ps(s.sqrt_bias_correction2),
               eps = _mm512_set1_ps(s.eps), neg_step_size = _mm512_set1_ps(s.neg_step_size);
  for (int64_t i = begin; i < end; i += kAvx512Lanes) {
    const __mmask16 lanes = lanes_mask(end - i);
    __m512 p = _mm512_maskz_loadu_ps(lanes, param + i);
    __m512 g = _mm512_maskz_loadu_ps(lanes, grad + i);
    if (s.scale_gradient) g = _mm512_mul_ps(g, gradient_factor);
    if (s.decoupled_decay) p = _mm512_mul_ps(p, decay);
    if (s.coupled_decay) g = _mm512_fmadd_ps(p, weight_decay, g);
    __m512 m = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, exp_avg + i), beta1);
    m = _mm512_fmadd_ps(g, one_minus_beta1, m);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, exp_avg_sq + i), beta2);
    v = _mm512_fmadd_ps(_mm512_mul_ps(one_minus_beta2, g), g, v);
    const __m512 denom =
        _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v), sqrt_bias_correction2), eps);
    p = _mm512_add_ps(p, _mm512_div_ps(_mm512_mul_ps(neg_step_size, m), denom));
    _mm512_mask_storeu_ps(param + i, lanes, p);
    _mm512_mask_storeu_ps(exp_avg + i, lanes, m);
    _mm512_mask_storeu_ps(exp_avg_sq + i, lanes, v);
  }
}
#endif

// The step of one contiguous float32 parameter, LibTorch 1.13's operators in LibTorch's order
// and association (ATen's CPU kernels, aten/src/ATen/native/cpu: mul = a * b, add with alpha =
// fmadd(other, alpha, self), addcmul = self + value * t1 * t2, div = a / b, addcdiv = self +
// value * t1 / t2), one element at a time instead of one operator at a time. at::vec::fmadd is
// one rounding in LibTorch's AVX2/AVX-512 kernels but two in the portable path (this file is
// built for the baseline ISA): the one source of difference. On AVX-512 CPUs the AVX-512 path
// above runs instead, with LibTorch's single roundings.
void fused_adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                       int64_t n, const StepScalars& s) {
  at::parallel_for(0, n, kAdamChunk, [&](int64_t begin, int64_t end) {
#if NMTZOO_HAS_AVX512_PATH
    if (avx512_available()) {
      fused_adam_update_avx512(param, grad, exp_avg, exp_avg_sq, begin, end, s);
      return;
    }
#endif
    const Vec gradient_factor(s.gradient_factor), decay(s.decay), weight_decay(s.weight_decay),
        beta1(s.beta1), one_minus_beta1(s.one_minus_beta1), beta2(s.beta2),
        one_minus_beta2(s.one_minus_beta2), sqrt_bias_correction2(s.sqrt_bias_correction2),
        eps(s.eps), neg_step_size(s.neg_step_size);
    auto update = [&](int64_t i, int64_t count) {
      Vec p = Vec::loadu(param + i, count);
      Vec g = Vec::loadu(grad + i, count);
      if (s.scale_gradient) g = g * gradient_factor;                // grad.mul_(factor)
      if (s.decoupled_decay) p = p * decay;                         // p.mul_(1 - lr * wd)
      if (s.coupled_decay) g = at::vec::fmadd(p, weight_decay, g);  // grad.add(p, wd)
      Vec m = Vec::loadu(exp_avg + i, count) * beta1;               // exp_avg.mul_(beta1)
      m = at::vec::fmadd(g, one_minus_beta1, m);                    //   .add_(grad, 1 - beta1)
      Vec v = Vec::loadu(exp_avg_sq + i, count) * beta2;            // exp_avg_sq.mul_(beta2)
      v = v + one_minus_beta2 * g * g;  //   .addcmul_(grad, grad, 1 - beta2)
      const Vec denom = v.sqrt() / sqrt_bias_correction2 + eps;  // (v.sqrt() / sqrt(bc2)).add_(eps)
      p = p + neg_step_size * m / denom;                         // p.addcdiv_(m, denom, -step_size)
      p.store(param + i, static_cast<int>(count));
      m.store(exp_avg + i, static_cast<int>(count));
      v.store(exp_avg_sq + i, static_cast<int>(count));
    };
    int64_t i = begin;
    for (; i + Vec::size() <= end; i += Vec::size()) update(i, Vec::size());
    if (i < end) update(i, end - i);  // the same vector code on a partial load: same rounding
  });
}

bool is_dense_cpu_float(const at::Tensor& t) {
  return t.defined() && t.layout() == at::kStrided && t.device().is_cpu() &&
         t.scalar_type() == at::kFloat && t.is_contiguous();
}

// Whether the fused step handles `p` (which has a gradient) given its state, if any.
template <typename ParamState>
bool fusable(const at::Tensor& p, const ParamState* state) {
  const at::Tensor& grad = p.grad();
  if (!is_dense_cpu_float(p) || !is_dense_cpu_float(grad) || !grad.sizes().equals(p.sizes()))
    return false;
  if (state == nullptr) return true;  // the state made below is zeros_like(p): contiguous like p
  return is_dense_cpu_float(state->exp_avg()) && is_dense_cpu_float(state->exp_avg_sq()) &&
         state->exp_avg().numel() == p.numel() && state->exp_avg_sq().numel() == p.numel();
}

// The fused step of Adam (decoupled = false) or AdamW (decoupled = true). `base_step` is the base
// class's own step(), run without a closure over the parameters the fused kernel does not take.
//
// Those parameters go through the base implementation itself rather than a rewrite of its math
// in ATen operators: the fallback is then LibTorch's step by construction (bitwise, with the same
// checks and errors, e.g. for sparse gradients, and amsgrad's max_exp_avg_sq), and stays so if
// LibTorch's step changes. It is run over temporary parameter groups holding only them, with
// copies of their groups' options; parameters are independent, so the order does not matter,
// and the state lives in the optimizer keyed by parameter, not by group.
template <typename Options, typename ParamState>
torch::Tensor fused_step(torch::optim::Optimizer& optimizer, bool decoupled, double gradient_factor,
                         const LossClosure& closure, const std::function<void()>& base_step) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  std::vector<torch::optim::OptimizerParamGroup> fallback_groups;
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    auto& options = static_cast<Options&>(group.options());
    std::vector<at::Tensor> fallback;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
      auto found = states.find(key);
      const auto* existing =
          found == states.end() ? nullptr : static_cast<const ParamState*>(found->second.get());
      if (options.amsgrad() || !fusable(p, existing)) {
        fallback.push_back(p);
        continue;
      }
      if (existing == nullptr) {  // as LibTorch initialises it
        auto state = std::make_unique<ParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        state->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        states[key] = std::move(state);
      }
      auto& state = static_cast<ParamState&>(*states[key]);
      state.step(state.step() + 1);
      // LibTorch's scalars, computed in double exactly as its step does.
      const double beta1 = std::get<0>(options.betas());
      const double beta2 = std::get<1>(options.betas());
      const double bias_correction1 = 1 - std::pow(beta1, state.step());
      const double bias_correction2 = 1 - std::pow(beta2, state.step());
      const double step_size = options.lr() / bias_correction1;
      StepScalars s;
      s.scale_gradient = gradient_factor != 1.0;
      s.gradient_factor = static_cast<float>(gradient_factor);
      s.decoupled_decay = decoupled && options.weight_decay() != 0;
      s.decay = static_cast<float>(1 - options.lr() * options.weight_decay());
      s.coupled_decay = !decoupled && options.weight_decay() != 0;
      s.weight_decay = static_cast<float>(options.weight_decay());
      s.beta1 = static_cast<float>(beta1);
      s.one_minus_beta1 = static_cast<float>(1 - beta1);
      s.beta2 = static_cast<float>(beta2);
      s.one_minus_beta2 = static_cast<float>(1 - beta2);
      s.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
      s.eps = static_cast<float>(options.eps());
      s.neg_step_size = static_cast<float>(-step_size);
      at::Tensor& exp_avg = state.exp_avg();
      at::Tensor& exp_avg_sq = state.exp_avg_sq();
      fused_adam_update(p.data_ptr<float>(), p.grad().data_ptr<float>(), exp_avg.data_ptr<float>(),
                        exp_avg_sq.data_ptr<float>(), p.numel(), s);
      // In-place operators bump the version counter (autograd's check that a tensor saved for
      // backward was not modified since); so does this.
      for (auto* t : {&p, &exp_avg, &exp_avg_sq}) t->unsafeGetTensorImpl()->bump_version();
    }
    if (!fallback.empty())
      fallback_groups.emplace_back(std::move(fallback), group.options().clone());
  }
  if (!fallback_groups.empty()) {
    for (auto& group : fallback_groups) scale_gradients(group.params(), gradient_factor);
    auto& groups = optimizer.param_groups();
    std::swap(groups, fallback_groups);
    try {
      base_step();
    } catch (...) {
      std::swap(groups, fallback_groups);
      throw;
    }
    std::swap(groups, fallback_groups);
  }
  return loss;
}

bool all_on_cpu(const std::vector<at::Tensor>& parameters) {
  return std::all_of(parameters.begin(), parameters.end(),
                     [](const at::Tensor& p) { return p.device().is_cpu(); });
}

}  // namespace

void scale_gradients(const std::vector<at::Tensor>& parameters, double factor) {
  if (factor == 1.0) return;
  torch::NoGradGuard no_grad;
  for (const auto& p : parameters) {
    if (p.grad().defined()) p.grad().mul_(factor);
  }
}

torch::Tensor FusedAdam::step(LossClosure closure) {
  const double factor = take_gradient_factor();
  if (!fast_kernels_enabled()) {
    for (auto& group : param_groups()) scale_gradients(group.params(), factor);
    return torch::optim::Adam::step(std::move(closure));
  }
  return fused_step<torch::optim::AdamOptions, torch::optim::AdamParamState>(
      *this, /*decoupled=*/false, factor, closure, [this] { torch::optim::Adam::step(nullptr); });
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  const double factor = take_gradient_factor();
  if (!fast_kernels_enabled()) {
    for (auto& group : param_groups()) scale_gradients(group.params(), factor);
    return torch::optim::AdamW::step(std::move(closure));
  }
  return fused_step<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(
      *this, /*decoupled=*/true, factor, closure, [this] { torch::optim::AdamW::step(nullptr); });
}

std::unique_ptr<torch::optim::Optimizer> make_adam(std::vector<at::Tensor> parameters,
                                                   const torch::optim::AdamOptions& options,
                                                   bool decoupled_weight_decay) {
  const bool fused = fast_kernels_enabled() && all_on_cpu(parameters);
  if (decoupled_weight_decay) {
    const auto adamw = torch::optim::AdamWOptions(options.lr())
                           .betas(options.betas())
                           .eps(options.eps())
                           .weight_decay(options.weight_decay())
                           .amsgrad(options.amsgrad());
    if (fused) return std::make_unique<FusedAdamW>(std::move(parameters), adamw);
    return std::make_unique<torch::optim::AdamW>(std::move(parameters), adamw);
  }
  if (fused) return std::make_unique<FusedAdam>(std::move(parameters), options);
  return std::make_unique<torch::optim::Adam>(std::move(parameters), options);
}

}  // namespace nmtzoo
