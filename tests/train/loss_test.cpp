// SPDX-License-Identifier: MIT
#include "libtorch/train/loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <tuple>
#include <vector>

#include "libtorch/kernels/kernels.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

TEST(LabelSmoothedNll, WithoutSmoothingIsSummedCrossEntropy) {
  torch::manual_seed(1);
  auto logits = torch::randn({5, 7});
  auto target = torch::tensor({0, 3, 6, 2, 2});
  auto sums = label_smoothed_nll(logits, target, 0.0);
  auto expected = torch::nn::functional::cross_entropy(
      logits, target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  EXPECT_NEAR(sums.loss.item<double>(), expected.item<double>(), 1e-5);
  EXPECT_NEAR(sums.nll.item<double>(), expected.item<double>(), 1e-5);
  EXPECT_EQ(sums.tokens, 5);
}

TEST(LabelSmoothedNll, MatchesTheSmoothedTargetDistribution) {
  torch::manual_seed(2);
  const double epsilon = 0.1;
  auto logits = torch::randn({3, 6});
  auto target = torch::tensor({1, 4, 0});
  auto log_probs = logits.log_softmax(-1);
  // q = 1 - eps on the reference, eps / (V - 1) on each other token.
  auto q = torch::full({3, 6}, epsilon / 5);
  for (int64_t i = 0; i < 3; ++i) q[i][target[i].item<int64_t>()] = 1 - epsilon;
  double expected = -(q * log_probs).sum().item<double>();
  auto sums = label_smoothed_nll(logits, target, epsilon);
  EXPECT_NEAR(sums.loss.item<double>(), expected, 1e-5);
  EXPECT_NEAR(sums.nll.item<double>(),
              -log_probs.gather(1, target.unsqueeze(1)).sum().item<double>(), 1e-6);
}

TEST(LabelSmoothedNll, GradientEqualsAutogradOfTheDefinition) {
  torch::manual_seed(3);
  for (double epsilon : {0.0, 0.1, 0.3}) {
    auto logits = torch::randn({4, 9}, torch::requires_grad());
    auto target = torch::tensor({8, 0, 3, 3});
    label_smoothed_nll(logits, target, epsilon).loss.backward();
    auto ours = logits.grad().clone();
    logits.mutable_grad().zero_();
    auto log_probs = logits.log_softmax(-1);
    auto q = torch::full({4, 9}, epsilon / 8);
    for (int64_t i = 0; i < 4; ++i) q[i][target[i].item<int64_t>()] = 1 - epsilon;
    (-(q * log_probs).sum()).backward();
    EXPECT_TRUE(torch::allclose(ours, logits.grad(), 1e-5, 1e-6)) << "epsilon " << epsilon;
  }
}

TEST(LabelSmoothedNll, ShapesAreChecked) {
  EXPECT_THROW(label_smoothed_nll(torch::randn({2, 3, 4}), torch::tensor({1, 2}), 0.1), c10::Error);
}

// The fused projection + loss against its unfused composition, label_smoothed_nll(linear(...)).
// The fused node runs in float32 only (double falls back), so the comparison is in float32: the
// two sum the same terms in different orders and take the log-likelihood from the softmax rather
// than from log_softmax, so they agree to float32 rounding of the sums, 1e-5 relative.
struct ProjectedCase {
  int64_t rows, features, vocab;
  bool bias;
  double epsilon;
};

struct LossAndGradients {
  double loss = 0, nll = 0;
  std::vector<at::Tensor> grads;  // features, weight, bias (undefined without one)
};

LossAndGradients projected_loss(const ProjectedCase& c, bool fused, bool bf16 = false) {
  testing::KernelSwitch kernels(fused);
  torch::manual_seed(c.rows * 131 + c.vocab);
  auto features = (torch::randn({c.rows, c.features}) * 2).requires_grad_();
  auto weight = torch::randn({c.vocab, c.features}).requires_grad_();
  auto bias = c.bias ? torch::randn({c.vocab}).requires_grad_() : at::Tensor();
  auto target = torch::randint(c.vocab, {c.rows});
  target[0] = c.vocab - 1;  // the last column, as in a chunk's edge
  LossSums sums = projected_label_smoothed_nll(features, weight, bias, target, c.epsilon, bf16);
  EXPECT_EQ(sums.tokens, c.rows);
  (sums.loss * 0.5).backward();  // a gradient of the loss other than 1
  LossAndGradients out{sums.loss.item<double>(),
                       sums.nll.item<double>(),
                       {features.grad(), weight.grad(), at::Tensor()}};
  if (c.bias) out.grads[2] = bias.grad();
  return out;
}

double relative_difference(const at::Tensor& ours, const at::Tensor& reference) {
  return (ours - reference).abs().max().item<double>() / reference.abs().max().item<double>();
}

void expect_close(const LossAndGradients& ours, const LossAndGradients& reference, double tolerance,
                  const std::string& what) {
  EXPECT_NEAR(ours.loss, reference.loss, tolerance * std::abs(reference.loss)) << what;
  EXPECT_NEAR(ours.nll, reference.nll, tolerance * std::abs(reference.nll)) << what;
  for (size_t i = 0; i < ours.grads.size(); ++i) {
    ASSERT_EQ(ours.grads[i].defined(), reference.grads[i].defined()) << what << " gradient " << i;
    if (ours.grads[i].defined()) {
      EXPECT_LT(relative_difference(ours.grads[i], reference.grads[i]), tolerance)
          << what << " gradient " << i;
    }
  }
}

TEST(ProjectedLabelSmoothedNll, FusedMatchesLinearThenLossOnOneAndTwoThreads) {
  // 40,000 columns make chunks of 16 rows: 37 rows are three chunks, the last one short, in two
  // blocks of the float32 path's weight gradient (32 and 5 rows).
  const std::vector<ProjectedCase> cases{{37, 24, 40000, true, 0.1},
                                         {37, 24, 40000, false, 0.0},
                                         {5, 3, 7, true, 0.3},
                                         {1, 8, 11, false, 0.1},
                                         {300, 64, 1001, true, 0.1}};
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (const auto& c : cases) {
      const std::string what = "rows " + std::to_string(c.rows) + " vocab " +
                               std::to_string(c.vocab) + " threads " + std::to_string(threads);
      expect_close(projected_loss(c, true), projected_loss(c, false), 1e-5, what);
    }
  }
}

// The float32 path computes the gradients in the forward pass and keeps them for backward: a
// second backward pass over a retained graph, or a gradient reaching only some inputs, must find
// them as they were.
TEST(ProjectedLabelSmoothedNll, GradientsKeptFromTheForwardPassSurviveASecondBackward) {
  testing::KernelSwitch on(true);
  torch::manual_seed(6);
  auto features = torch::randn({37, 24}).requires_grad_();
  auto weight = torch::randn({40000, 24}).requires_grad_();
  auto bias = torch::randn({40000}).requires_grad_();
  auto target = torch::randint(40000, {37});
  LossSums sums = projected_label_smoothed_nll(features, weight, bias, target, 0.1, false);
  (sums.loss * 0.5).backward({}, /*retain_graph=*/true);
  const auto once =
      std::vector<at::Tensor>{features.grad().clone(), weight.grad().clone(), bias.grad().clone()};
  (sums.loss * 0.5).backward();
  const auto twice = std::vector<at::Tensor>{features.grad(), weight.grad(), bias.grad()};
  for (size_t i = 0; i < once.size(); ++i)
    EXPECT_TRUE(torch::allclose(twice[i], 2 * once[i])) << "gradient " << i;

  auto frozen_features = features.detach();
  weight.mutable_grad() = at::Tensor();
  LossSums weight_only =
      projected_label_smoothed_nll(frozen_features, weight, bias, target, 0.1, false);
  weight_only.loss.backward();
  EXPECT_TRUE(torch::allclose(weight.grad(), 2 * once[1], 1e-5, 1e-6));
}

TEST(ProjectedLabelSmoothedNll, KernelsOffIsTheUnfusedComposition) {
  testing::KernelSwitch off(false);
  torch::manual_seed(4);
  auto features = torch::randn({9, 5});
  auto weight = torch::randn({13, 5});
  auto bias = torch::randn({13});
  auto target = torch::randint(13, {9});
  auto ours = projected_label_smoothed_nll(features, weight, bias, target, 0.1, false);
  auto reference =
      label_smoothed_nll(torch::nn::functional::linear(features, weight, bias), target, 0.1);
  EXPECT_TRUE(torch::equal(ours.loss, reference.loss));
  EXPECT_TRUE(torch::equal(ours.nll, reference.nll));
}

TEST(ProjectedLabelSmoothedNll, UnlikelyTargetsKeepAFiniteExactLoss) {
  // p_target underflows float32 (a logit gap of 200): the log-likelihood must still be the gap.
  torch::manual_seed(5);
  auto features = torch::zeros({3, 2});
  features.select(1, 0).fill_(1);
  auto weight = torch::zeros({6, 2});
  weight[2][0] = -200;  // token 2's logit is -200 on every row, the others 0
  auto target = torch::tensor({2, 0, 2});
  for (bool fused : {true, false}) {
    testing::KernelSwitch kernels(fused);
    auto sums = projected_label_smoothed_nll(features, weight, {}, target, 0.0, false);
    const double expected_2 = 200 + std::log(5.0);  // -log(e^-200 / (5 + e^-200))
    EXPECT_NEAR(sums.nll.item<double>(), 2 * expected_2 + std::log(5.0), 1e-3) << "fused " << fused;
  }
}

TEST(ProjectedLabelSmoothedNll, ValidationWithoutGradientsGivesTheSameSums) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  const ProjectedCase c{37, 24, 40000, true, 0.1};
  auto with_gradient = projected_loss(c, true);
  torch::manual_seed(c.rows * 131 + c.vocab);
  auto features = torch::randn({c.rows, c.features}) * 2;
  auto weight = torch::randn({c.vocab, c.features});
  auto bias = torch::randn({c.vocab});
  auto target = torch::randint(c.vocab, {c.rows});
  target[0] = c.vocab - 1;
  torch::NoGradGuard no_grad;
  auto sums = projected_label_smoothed_nll(features, weight, bias, target, c.epsilon, false);
  EXPECT_DOUBLE_EQ(sums.loss.item<double>(), with_gradient.loss);
  EXPECT_DOUBLE_EQ(sums.nll.item<double>(), with_gradient.nll);
}

TEST(ProjectedLabelSmoothedNll, Bf16ProductsMatchAutocastsLinear) {
  // Both run the products in bfloat16 and the loss in float32; the fused one rounds the
  // gradient p - q to bfloat16 before its products, as autocast's linear backward does.
  const ProjectedCase c{37, 24, 40000, true, 0.1};
  expect_close(projected_loss(c, true, true), projected_loss(c, false, true), 2e-2, "bf16");
}

TEST(ProjectedLabelSmoothedNll, ShapesAreChecked) {
  EXPECT_THROW(projected_label_smoothed_nll(torch::randn({2, 3}), torch::randn({5, 4}), {},
                                            torch::tensor({1, 2}), 0.1, false),
               c10::Error);
  EXPECT_THROW(projected_label_smoothed_nll(torch::randn({2, 3}), torch::randn({5, 3}),
                                            torch::randn({4}), torch::tensor({1, 2}), 0.1, false),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
