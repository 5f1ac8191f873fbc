// SPDX-License-Identifier: MIT
#include "libtorch/search/search_strategy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/search/search.h"
#include "tests/models/model_fixtures.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

// A strategy written outside the search: one hypothesis that follows a fixed script of tokens
// whatever the model prefers, then EOS. The search loop is not edited to run it.
class ScriptedStrategy : public SearchStrategy {
 public:
  explicit ScriptedStrategy(std::vector<int64_t> script) : script_(std::move(script)) {}
  int64_t width() const override { return 1; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                      const std::vector<int64_t>&) override {
    if (step == 0) eos_forbidden_first_ = std::isinf(log_probs[0][0][kEosId].item<float>());
    const int64_t token = step < static_cast<int64_t>(script_.size()) ? script_[step] : kEosId;
    at::Tensor tokens = torch::full({log_probs.size(0), 1}, token, torch::kLong);
    at::Tensor chosen = log_probs.select(1, 0).gather(1, tokens);
    return {scores + chosen, torch::zeros_like(tokens), tokens};
  }
  bool eos_forbidden_first_ = false;

 private:
  std::vector<int64_t> script_;
};

TEST(SearchStrategy, APluggedStrategyDrivesTheOneSearch) {
  for (const std::string variant : {"transformer_post", "rnn_bahdanau"}) {
    auto model = testing::tiny_model(variant);
    auto batch = testing::random_batch({5, 3}, {1, 1}, 21);
    const std::vector<int64_t> script{7, 4, 9};
    ScriptedStrategy strategy(script);
    SearchOptions options;
    options.max_len_b = 10;
    auto results = search(*model, batch.src_tokens, batch.src_pad_mask, options, strategy);
    EXPECT_TRUE(strategy.eos_forbidden_first_) << "the strategy sees the search's constraints";
    // The scores are the model's own log-probabilities of the scripted output.
    torch::NoGradGuard no_grad;
    at::Tensor tgt_in =
        torch::tensor(std::vector<int64_t>{kBosId, 7, 4, 9}).unsqueeze(0).repeat({2, 1});
    at::Tensor tgt_out =
        torch::tensor(std::vector<int64_t>{7, 4, 9, kEosId}).unsqueeze(0).repeat({2, 1});
    at::Tensor log_probs =
        model->forward(batch.src_tokens, batch.src_pad_mask, tgt_in).log_softmax(-1);
    at::Tensor expected = log_probs.gather(2, tgt_out.unsqueeze(2)).sum({1, 2});
    for (int64_t b = 0; b < 2; ++b) {
      ASSERT_EQ(results[b].size(), 1u);
      EXPECT_EQ(results[b][0].tokens, script) << variant;
      EXPECT_NEAR(results[b][0].log_prob, expected[b].item<double>(), 1e-4) << variant;
    }
  }
}

TEST(SearchStrategy, BeamTakesTwiceTheBeamOfCandidatesBestFirst) {
  BeamStrategy beam(2);
  // One sentence, two hypotheses, vocabulary of 3.
  at::Tensor log_probs = torch::tensor({{-1.0f, -2.0f, -3.0f}, {-0.5f, -4.0f, -0.7f}}).unsqueeze(0);
  at::Tensor scores = torch::tensor({{0.0f, -1.0f}});
  StepCandidates c = beam.step(0, log_probs, scores, {0});
  ASSERT_EQ(c.scores.sizes(), (std::vector<int64_t>{1, 4}));
  EXPECT_TRUE(c.scores.equal(torch::tensor({{-1.0f, -1.5f, -1.7f, -2.0f}})));
  EXPECT_TRUE(c.beams.equal(torch::tensor({{0, 1, 1, 0}})));
  EXPECT_TRUE(c.tokens.equal(torch::tensor({{0, 0, 2, 1}})));
}

TEST(SearchStrategy, GreedyTakesTheMostProbableToken) {
  GreedyStrategy greedy;
  at::Tensor log_probs = torch::tensor({{-1.0f, -0.2f, -3.0f}, {-0.1f, -4.0f, -2.0f}}).unsqueeze(1);
  at::Tensor scores = torch::tensor({{-1.0f}, {0.0f}});
  StepCandidates c = greedy.step(0, log_probs, scores, {0, 1});
  EXPECT_TRUE(c.tokens.equal(torch::tensor({{1}, {0}})));
  EXPECT_TRUE(c.beams.equal(torch::zeros({2, 1}, torch::kLong)));
  EXPECT_TRUE(torch::allclose(c.scores, torch::tensor({{-1.2f}, {-0.1f}})));
}

}  // namespace
}  // namespace nmtzoo
