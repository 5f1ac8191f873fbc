// SPDX-License-Identifier: MIT
#include "libtorch/kernels/deferred_gradients.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/variable.h>

#include <utility>

#include "libtorch/kernels/kernels.h"

namespace nmtzoo {

using torch::autograd::Edge;
using torch::autograd::SavedVariable;
using torch::autograd::variable_list;

namespace {

torch::autograd::edge_list gradient_edges(const std::vector<at::Tensor>& tensors) {
  torch::autograd::edge_list edges;
  edges.reserve(tensors.size());
  for (const at::Tensor& t : tensors) edges.push_back(torch::autograd::impl::gradient_edge(t));
  return edges;
}

}  // namespace

void refuse_double_backward(const char* node) {
  TORCH_CHECK(!at::GradMode::is_enabled(), node,
              ": no double backward (create_graph) through nmtzoo's deferred gradients; "
              "set NMTZOO_KERNELS=off for LibTorch's operators");
}

DeferredGradients::DeferredGradients(const std::vector<at::Tensor>& targets)
    : Node(gradient_edges(targets)) {
  for (const at::Tensor& target : targets) add_input_metadata(target);
}

Edge DeferredGradients::edge_to(uint32_t index) {
  TORCH_CHECK(index < num_inputs(), "DeferredGradients: no target ", index);
  return Edge(shared_from_this(), index);
}

variable_list DeferredGradients::apply(variable_list&& /*never_fed*/) {
  refuse_double_backward("nmtzoo::DeferredGradients");
  variable_list result = sums();
  TORCH_INTERNAL_ASSERT(result.size() == num_outputs());
  return result;
}

// The weight's (and bias's) node of a RecurrentLinear: the steps' inputs and output gradients.
class RecurrentLinearSums : public DeferredGradients {
 public:
  RecurrentLinearSums(const std::vector<at::Tensor>& targets) : DeferredGradients(targets) {}
  void add(at::Tensor input, at::Tensor grad) {
    inputs_.push_back(std::move(input));
    grads_.push_back(std::move(grad));
  }
  void release_variables() override {
    inputs_.clear();
    grads_.clear();
  }

 protected:
  variable_list sums() override {
    variable_list result(num_outputs());
    if (!grads_.empty()) {
      const at::Tensor grad = at::cat(grads_);
      result[0] = grad.t().mm(at::cat(inputs_));
      if (result.size() > 1) result[1] = grad.sum(0);
    }
    release_variables();
    return result;
  }

 private:
  std::vector<at::Tensor> inputs_, grads_;
};

namespace {

// A step's backward: x's gradient; x and the output's gradient go to the recurrence's node.
class RecurrentLinearStep : public torch::autograd::Node {
 public:
  RecurrentLinearStep(const at::Tensor& x, const at::Tensor& weight,
                      std::shared_ptr<RecurrentLinearSums> sums)
      : input_(x, false), weight_(weight, false), sums_(std::move(sums)) {
    add_next_edge(torch::autograd::impl::gradient_edge(x));
    for (uint32_t i = 0; i < sums_->num_inputs(); ++i) add_next_edge(sums_->edge_to(i));
  }
  std::string name() const override { return "nmtzoo::RecurrentLinearStep"; }
  variable_list apply(variable_list&& grads) override {
    refuse_double_backward("nmtzoo::RecurrentLinearStep");
    variable_list result(num_outputs());
    const at::Tensor& grad = grads[0];
    if (!grad.defined()) return result;
    if (should_compute_output(0)) result[0] = grad.mm(weight_.unpack());
    sums_->add(input_.unpack(), grad);
    return result;
  }
  void release_variables() override {
    input_.reset_data();
    weight_.reset_data();
  }

 private:
  SavedVariable input_, weight_;
  std::shared_ptr<RecurrentLinearSums> sums_;
};

}  // namespace

RecurrentLinear::RecurrentLinear(const at::Tensor& weight, const at::Tensor& bias)
    : weight_(weight), bias_(bias) {
  // Under autocast, LibTorch's own casts and products (a plain product here).
  if (!fast_kernels_enabled() || !at::GradMode::is_enabled() || !weight.requires_grad() ||
      at::autocast::is_cpu_enabled() || at::autocast::is_enabled()) {
    return;
  }
  std::vector<at::Tensor> targets{weight};
  if (bias.defined() && bias.requires_grad()) targets.push_back(bias);
  sums_ = std::make_shared<RecurrentLinearSums>(targets);
}

at::Tensor RecurrentLinear::operator()(const at::Tensor& x) const {
  TORCH_CHECK(x.dim() == 2 && x.size(1) == weight_.size(1), "RecurrentLinear: input must be (N, ",
              weight_.size(1), "), got ", x.sizes());
  if (!sums_ || !at::GradMode::is_enabled()) {
    return bias_.defined() ? at::addmm(bias_, x, weight_.t()) : at::mm(x, weight_.t());
  }
  at::Tensor y;
  {
    at::AutoGradMode no_grad(false);
    y = bias_.defined() ? at::addmm(bias_, x, weight_.t()) : at::mm(x, weight_.t());
  }
  torch::autograd::set_history(y, std::make_shared<RecurrentLinearStep>(x, weight_, sums_));
  return y;
}

}  // namespace nmtzoo
