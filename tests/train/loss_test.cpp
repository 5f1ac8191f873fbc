#include "core/train/loss.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

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

}  // namespace
}  // namespace nmtzoo
