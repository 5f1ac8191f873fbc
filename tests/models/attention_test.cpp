// SPDX-License-Identifier: MIT
#include "libtorch/models/attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace nmtzoo {
namespace {

class EveryScore : public ::testing::TestWithParam<AttentionScore> {};

INSTANTIATE_TEST_SUITE_P(Attention, EveryScore,
                         ::testing::Values(AttentionScore::kAdditive, AttentionScore::kDot,
                                           AttentionScore::kGeneral, AttentionScore::kScaledDot));

TEST_P(EveryScore, RowsSumToOneAndPaddedKeysGetZeroWeight) {
  torch::manual_seed(1);
  Attention attention(AttentionOptions(6, 6).score(GetParam()).hidden_dim(5));
  auto keys = torch::randn({2, 4, 6});
  auto mask = torch::tensor({false, false, true, true, false, false, false, true}).view({2, 4});
  auto [context, weights] = attention->forward(torch::randn({2, 3, 6}), keys, mask);
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({2, 3})));
  EXPECT_EQ(weights.masked_select(mask.unsqueeze(1).expand({2, 3, 4})).abs().max().item<float>(),
            0.0f);
  EXPECT_TRUE(torch::allclose(context, torch::bmm(weights, keys)));
}

TEST_P(EveryScore, SingleStepQueryGivesTwoDimensionalResults) {
  Attention attention(AttentionOptions(6, 6).score(GetParam()));
  auto keys = torch::randn({2, 4, 6});
  auto [context, weights] = attention->forward(torch::randn({2, 6}), keys);
  EXPECT_EQ(context.sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, 4}));
}

TEST(Attention, AdditiveScoreIsBahdanausAlignmentModel) {
  torch::manual_seed(2);
  Attention attention(AttentionOptions(3, 4).score(AttentionScore::kAdditive).hidden_dim(5));
  auto s = torch::randn({1, 3});
  auto h = torch::randn({1, 2, 4});
  auto [context, weights] = attention->forward(s, h);
  // e_j = v^T tanh(W s + U h_j + b)
  auto W = attention->query_proj->weight;
  auto U = attention->key_proj->weight;
  auto b = attention->key_proj->bias;
  auto v = attention->energy->weight.view({-1});
  std::vector<at::Tensor> energies;
  for (int64_t j = 0; j < 2; ++j) {
    energies.push_back(torch::dot(v, torch::tanh(torch::mv(W, s[0]) + torch::mv(U, h[0][j]) + b)));
  }
  auto expected = torch::stack(energies).softmax(0);
  EXPECT_TRUE(torch::allclose(weights[0], expected, 1e-6, 1e-6));
}

TEST(Attention, RegistersOnlyWhatItsScoreNeeds) {
  auto count = [](AttentionScore score) {
    return Attention(AttentionOptions(6, 8).score(score).hidden_dim(5))->parameters().size();
  };
  EXPECT_EQ(count(AttentionScore::kAdditive), 4u);  // W, U, b, v
  EXPECT_EQ(count(AttentionScore::kGeneral), 1u);
  EXPECT_THROW(Attention(AttentionOptions(6, 8).score(AttentionScore::kDot)), c10::Error);
  EXPECT_EQ(
      Attention(AttentionOptions(8, 8).score(AttentionScore::kScaledDot))->parameters().size(), 0u);
}

TEST(Attention, ScaledDotDividesBySqrtOfTheSize) {
  Attention dot(AttentionOptions(4, 4).score(AttentionScore::kDot));
  Attention scaled(AttentionOptions(4, 4).score(AttentionScore::kScaledDot));
  auto q = torch::randn({1, 4});
  auto k = torch::randn({1, 3, 4});
  auto [c1, w1] = dot->forward(q * 0.5, k);  // q / sqrt(4)
  auto [c2, w2] = scaled->forward(q, k);
  EXPECT_TRUE(torch::allclose(w1, w2));
}

}  // namespace
}  // namespace nmtzoo
