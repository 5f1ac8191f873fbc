#include "core/train/loss.h"

#include <torch/torch.h>

namespace nmtzoo {
namespace {

// Label-smoothed cross-entropy in one autograd node. With q the smoothed target distribution,
// loss_i = sum_v q_v (lse_i - z_iv), whose gradient is softmax(z_i) - q: the backward pass is one
// exp over the logits instead of LibTorch's chain of log_softmax, gather, sum and their
// backwards (each a pass over the N x V logits, plus an N x V zero-filled scatter).
class SmoothedCrossEntropy : public torch::autograd::Function<SmoothedCrossEntropy> {
 public:
  // Returns (smoothed loss sum, nll sum); only the first is differentiated.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& logits, const at::Tensor& target,
                                                double epsilon) {
    const double vocab = static_cast<double>(logits.size(1));
    const double other = epsilon > 0 ? epsilon / (vocab - 1) : 0.0;
    const double on_target = 1.0 - epsilon - other;
    at::Tensor lse = logits.logsumexp(-1);                                   // (N)
    at::Tensor target_logit = logits.gather(1, target.unsqueeze(1)).squeeze(1);
    at::Tensor nll = (lse - target_logit).sum();
    at::Tensor loss = nll * on_target;  // a tensor of its own: nll is not differentiable
    if (epsilon > 0) {
      // sum_v -log p_v = V * lse - sum_v z_v
      loss += other * (lse * vocab - logits.sum(-1)).sum();
    }
    ctx->save_for_backward({logits, target, lse});
    ctx->saved_data["other"] = other;
    ctx->saved_data["on_target"] = on_target;
    ctx->mark_non_differentiable({nll});
    return {loss, nll};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& logits = saved[0];
    const at::Tensor& target = saved[1];
    const at::Tensor& lse = saved[2];
    const double other = ctx->saved_data["other"].toDouble();
    const double on_target = ctx->saved_data["on_target"].toDouble();
    at::Tensor grad = (logits - lse.unsqueeze(1)).exp_();  // softmax
    if (other > 0) grad.sub_(other);
    grad.scatter_add_(1, target.unsqueeze(1),
                      torch::full({target.size(0), 1}, -on_target, grad.options()));
    grad.mul_(grads[0]);
    return {grad, at::Tensor(), at::Tensor()};
  }
};

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

}  // namespace nmtzoo
