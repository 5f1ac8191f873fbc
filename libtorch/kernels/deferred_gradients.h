// SPDX-License-Identifier: MIT
// Gradients of a tensor that every step of a recurrence reads (a weight, the encoder's outputs),
// summed over the steps once instead of step by step.
//
// Why: autograd gives each step's use of a shared tensor its own gradient and adds them up. For a
// weight W used at every step of the RNN decoder, that is per step a W-sized product whose inner
// dimension is the batch's ~100 sentences (where oneDNN runs far below its ceiling) and a W-sized
// add (TBackward's accumulation: 111 ms per update of the RNN recipe, profiled); for the source
// the attention reads, a (B, S, A) and a (B, S, M) gradient written and added per step. Here the
// steps' backward nodes point their edge for the shared tensor at one DeferredGradients node,
// which autograd runs after the last of them (a node runs once all its inputs have arrived): a
// recurrent linear's steps leave their inputs and output gradients there, and the node makes the
// weight's gradient as one product over all steps; the attention's steps add into its buffers.
//
// Nothing here is CPU-specific: RecurrentLinear runs on any device.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/autograd/function.h>

#include <memory>
#include <string>
#include <vector>

namespace nmtzoo {

// The node the steps' edges point at for the shared tensors `targets` (each requiring a gradient).
// Autograd never feeds it a gradient: a step's node returns none for these edges and leaves its
// share with the node instead. apply() hands autograd the sums (sums(), once per backward pass).
class DeferredGradients : public torch::autograd::Node {
 public:
  explicit DeferredGradients(const std::vector<at::Tensor>& targets);
  // The edge a step's backward node has for targets[index].
  torch::autograd::Edge edge_to(uint32_t index);
  torch::autograd::variable_list apply(torch::autograd::variable_list&& never_fed) override;
  std::string name() const override { return "nmtzoo::DeferredGradients"; }

 protected:
  // The gradients of the targets (undefined: none) from what the steps left; then forgets it.
  virtual torch::autograd::variable_list sums() = 0;
};

// Throws unless autograd runs without create_graph: the deferred nodes compute their gradients
// outside autograd.
void refuse_double_backward(const char* node);

class RecurrentLinearSums;

// x W^T + b for the x of every step of one recurrence (one forward pass). Under autograd, when
// the weight requires a gradient, each step's backward computes only x's gradient and leaves x and
// its output gradient to the recurrence's node, which computes W's and b's gradients as one
// product over all steps' rows (concatenated: one copy of the (N, in + out) rows against the
// per-step W-sized sums it saves). Otherwise (no gradient wanted, autocast, or the kernels
// switched off: libtorch/kernels/kernels.h) a plain product under autograd.
// Double backward through it is refused (the gradient of x is computed outside autograd).
class RecurrentLinear {
 public:
  RecurrentLinear() = default;
  RecurrentLinear(const at::Tensor& weight, const at::Tensor& bias);
  // x (N, in) -> (N, out).
  at::Tensor operator()(const at::Tensor& x) const;
  bool defers() const { return sums_ != nullptr; }

 private:
  at::Tensor weight_, bias_;
  std::shared_ptr<RecurrentLinearSums> sums_;
};

}  // namespace nmtzoo
