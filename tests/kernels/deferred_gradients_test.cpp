// SPDX-License-Identifier: MIT
#include "libtorch/kernels/deferred_gradients.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "libtorch/kernels/step_attention.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

// Leaves of the same values, one copy per dtype.
std::vector<torch::Tensor> leaves(const std::vector<torch::Tensor>& values,
                                  torch::ScalarType dtype) {
  std::vector<torch::Tensor> result;
  for (const auto& v : values)
    result.push_back(v.to(dtype).detach().requires_grad_(v.requires_grad()));
  return result;
}

std::vector<torch::Tensor> gradients(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> result;
  for (const auto& t : tensors)
    result.push_back(t.grad().defined() ? t.grad().to(torch::kDouble) : torch::Tensor());
  return result;
}

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& expected,
                  double rtol, double atol) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].defined(), expected[i].defined()) << "gradient " << i;
    if (!got[i].defined()) continue;
    EXPECT_TRUE(torch::allclose(got[i], expected[i], rtol, atol))
        << "gradient " << i << ": largest difference "
        << (got[i] - expected[i]).abs().max().item<double>();
  }
}

// A GRU-like recurrence h_t = tanh(x_t W^T + b + h_{t-1} U^T) over 5 steps of 3 rows, loss on
// every state: W, U, b, the inputs and h_0 get the gradients of the plain composition, to
// float64's rounding (the sums run in another order), with and without a bias, h_0 with and
// without a gradient.
TEST(RecurrentLinear, GradientsEqualThePlainRecurrencesInFloat64) {
  testing::KernelSwitch on(true);
  torch::manual_seed(1);
  for (const bool bias : {true, false}) {
    for (const bool initial_grad : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "bias " << bias << ", h_0 gradient " << initial_grad);
      const torch::Tensor w = torch::randn({6, 4}).requires_grad_(),
                          u = torch::randn({6, 6}).requires_grad_();
      const torch::Tensor b = bias ? torch::randn({6}).requires_grad_() : torch::Tensor();
      const torch::Tensor x = torch::randn({5, 3, 4}).requires_grad_();
      const torch::Tensor h0 = torch::randn({3, 6}).requires_grad_(initial_grad);
      const torch::Tensor upstream = torch::randn({5, 3, 6}, torch::kDouble);
      std::vector<torch::Tensor> values{w, u, x, h0};
      if (bias) values.push_back(b);
      auto run = [&](bool deferred) {
        auto t = leaves(values, torch::kDouble);
        const torch::Tensor& w64 = t[0];
        const torch::Tensor& u64 = t[1];
        const torch::Tensor b64 = bias ? t[4] : torch::Tensor();
        const RecurrentLinear input(w64, b64), hidden(u64, {});
        EXPECT_TRUE(input.defers() && hidden.defers());
        torch::Tensor h = t[3], loss = torch::zeros({}, torch::kDouble);
        for (int64_t step = 0; step < 5; ++step) {
          const torch::Tensor x_t = t[2][step];
          h = deferred ? torch::tanh(input(x_t) + hidden(h))
                       : torch::tanh(torch::nn::functional::linear(x_t, w64, b64) + h.mm(u64.t()));
          loss = loss + (h * upstream[step]).sum();
        }
        EXPECT_EQ(testing::graph_nodes(loss).count("nmtzoo::DeferredGradients"),
                  deferred ? 1u : 0u);
        loss.backward();
        return gradients(t);
      };
      const auto expected = run(false);
      const auto got = run(true);
      expect_close(got, expected, 1e-12, 1e-12);
    }
  }
}

// Under torch.no_grad, with the kernels off or for a weight without a gradient: a plain product,
// no deferred node. A retained graph's second backward gets the same gradients again (the node
// forgets each pass's steps), and a double backward is refused with a message.
TEST(RecurrentLinear, PlainWhereNothingIsDeferredAndRefusesDoubleBackward) {
  testing::KernelSwitch on(true);
  torch::manual_seed(2);
  const torch::Tensor w = torch::randn({3, 2}).requires_grad_(),
                      x = torch::randn({4, 2}).requires_grad_();
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(RecurrentLinear(w, {}).defers());
  }
  EXPECT_FALSE(RecurrentLinear(w.detach(), {}).defers());
  {
    testing::KernelSwitch off(false);
    RecurrentLinear plain(w, {});
    EXPECT_FALSE(plain.defers());
    EXPECT_TRUE(torch::allclose(plain(x), x.mm(w.t())));
  }
  RecurrentLinear deferred(w, {});
  ASSERT_TRUE(deferred.defers());
  const torch::Tensor loss = (deferred(x) * deferred(x * 2)).sum();
  loss.backward({}, /*retain_graph=*/true);
  const torch::Tensor first = w.grad().clone();
  w.mutable_grad().zero_();
  loss.backward({}, /*retain_graph=*/true);
  EXPECT_TRUE(torch::allclose(w.grad(), first));
  const torch::Tensor twice = (x.mm(w.t()) * (x * 2).mm(w.t())).sum();
  EXPECT_TRUE(torch::allclose(first, torch::autograd::grad({twice}, {w})[0], 1e-5, 1e-5));
  try {
    torch::autograd::grad({loss}, {w}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    ADD_FAILURE() << "a double backward went through";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no double backward"), std::string::npos) << e.what();
  }
}

// The RNN decoder's attention over 4 steps whose queries read the previous step's context, as the
// composition scores, masks, normalises and sums it (in float64 from the same values): the
// kernel's context and weights in float32, and the gradients of the queries' inputs, the energy,
// the keys and the memory through both outputs, additive and dot scores, padded rows, odd sizes,
// one thread and two. Tolerance: float32 rounding over sums of ~10 terms (1e-5 relative).
TEST(TrainingStepContext, StepsAndGradientsEqualTheCompositionInFloat64) {
  testing::KernelSwitch on(true);
  const int64_t batch = 3, positions = 7, width = 5, dim = 6, steps = 4;
  torch::manual_seed(3);
  const torch::Tensor keys = torch::randn({batch, positions, width}).requires_grad_();
  const torch::Tensor memory = torch::randn({batch, positions, dim}).requires_grad_();
  const torch::Tensor energy = torch::randn({width}).requires_grad_();
  const torch::Tensor inputs = torch::randn({steps, batch, width}).requires_grad_();
  const torch::Tensor feedback = (0.5 * torch::randn({dim, width})).requires_grad_();
  torch::Tensor mask = torch::zeros({batch, positions}, torch::kBool);
  mask.index_put_({0, torch::indexing::Slice(4, torch::indexing::None)}, true);
  mask.index_put_({2, 6}, true);
  const torch::Tensor upstream_context = torch::randn({steps, batch, dim}, torch::kDouble);
  const torch::Tensor upstream_weights = torch::randn({steps, batch, positions}, torch::kDouble);

  for (const bool additive : {true, false}) {
    for (const int64_t thread_count : {int64_t{1}, int64_t{2}}) {
      SCOPED_TRACE(::testing::Message()
                   << (additive ? "additive" : "dot") << ", " << thread_count << " threads");
      testing::ThreadCount thread_scope(static_cast<int>(thread_count));
      const double scale = additive ? 1.0 : 0.7;
      auto run = [&](bool kernel) {
        auto t = leaves({keys, memory, energy, inputs, feedback},
                        kernel ? torch::kFloat : torch::kDouble);
        const torch::Tensor &k = t[0], &m = t[1], &v = t[2], &x = t[3], &p = t[4];
        std::optional<TrainingStepContext> source;
        if (kernel) source.emplace(k, m, mask);
        torch::Tensor context = torch::zeros({batch, dim}, k.options()),
                      loss = torch::zeros({}, torch::kDouble);
        std::vector<torch::Tensor> outputs;
        for (int64_t step = 0; step < steps; ++step) {
          const torch::Tensor query = torch::tanh(x[step] + context.mm(p));
          torch::Tensor weights;
          if (kernel) {
            std::tie(context, weights) = (*source)(query, additive ? v : torch::Tensor(), scale);
          } else {
            torch::Tensor scores = additive ? (torch::tanh(query.unsqueeze(1) + k) * v).sum(-1)
                                            : (k * query.unsqueeze(1)).sum(-1) * scale;
            weights =
                scores.masked_fill(mask, -std::numeric_limits<double>::infinity()).softmax(-1);
            context = (weights.unsqueeze(2) * m).sum(1);
          }
          outputs.push_back(context.detach().to(torch::kDouble));
          outputs.push_back(weights.detach().to(torch::kDouble));
          loss = loss + (context.to(torch::kDouble) * upstream_context[step]).sum() +
                 (weights.to(torch::kDouble) * upstream_weights[step]).sum();
        }
        if (kernel) {
          const auto nodes = testing::graph_nodes(loss);
          EXPECT_EQ(nodes.count("nmtzoo::TrainingStepContext"), 1u);
          EXPECT_EQ(nodes.count("nmtzoo::DeferredGradients"), 1u);
        }
        loss.backward();
        auto result = gradients(t);
        if (!additive) result[2] = torch::Tensor();
        result.insert(result.end(), outputs.begin(), outputs.end());
        return result;
      };
      const auto expected = run(false);
      const auto got = run(true);
      expect_close(got, expected, 1e-5, 1e-5);
      for (int64_t step = 0; step < steps; ++step) {
        const torch::Tensor& weights = got[5 + 2 * static_cast<size_t>(step) + 1];
        EXPECT_EQ(weights.index({0, torch::indexing::Slice(4, torch::indexing::None)})
                      .abs()
                      .max()
                      .item<double>(),
                  0.0);
      }
    }
  }
}

// What the kernel takes: under autograd, kernels on, float32 CPU sources that both need gradients.
TEST(TrainingStepContext, AppliesToTrainingSourcesOnly) {
  testing::KernelSwitch on(true);
  const torch::Tensor keys = torch::randn({2, 3, 4}).requires_grad_(),
                      memory = torch::randn({2, 3, 5}).requires_grad_();
  EXPECT_TRUE(TrainingStepContext::applies(keys, memory, {}));
  EXPECT_TRUE(TrainingStepContext::applies(keys, memory, torch::zeros({2, 3}, torch::kBool)));
  EXPECT_FALSE(TrainingStepContext::applies(keys, memory, torch::zeros({2, 4}, torch::kBool)));
  EXPECT_FALSE(TrainingStepContext::applies(keys.detach(), memory, {}));
  EXPECT_FALSE(TrainingStepContext::applies(keys.to(torch::kDouble), memory, {}));
  EXPECT_FALSE(TrainingStepContext::applies(keys, torch::randn({2, 4, 5}).requires_grad_(), {}));
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(TrainingStepContext::applies(keys, memory, {}));
  }
  testing::KernelSwitch off(false);
  EXPECT_FALSE(TrainingStepContext::applies(keys, memory, {}));
}

}  // namespace
}  // namespace nmtzoo
