// SPDX-License-Identifier: MIT
#include "libtorch/kernels/beam_candidates.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "libtorch/search/search_strategy.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The composition the kernel replaces.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> composed(const torch::Tensor& log_probs,
                                                                 const torch::Tensor& scores,
                                                                 int64_t count) {
  const int64_t v = log_probs.size(2);
  auto [values, flat] =
      (scores.unsqueeze(2) + log_probs).view({log_probs.size(0), -1}).topk(count, 1);
  return {values, flat.div(v, "floor"), flat.remainder(v)};
}

// Bit for bit: the same float32 sums in the same order, and each names the hypothesis and token it
// sums. Where sums are equal (likely among thousands), topk's order of them is unspecified: then
// the candidates must still be all different.
void expect_as_composed(const torch::Tensor& log_probs, const torch::Tensor& scores,
                        int64_t count) {
  auto [values, beams, tokens] = beam_candidates(log_probs, scores, count);
  auto [ref_values, ref_beams, ref_tokens] = composed(log_probs, scores, count);
  EXPECT_TRUE(values.equal(ref_values)) << (values - ref_values).abs().max();
  torch::Tensor sums = scores.unsqueeze(2) + log_probs;
  const int64_t vocab = log_probs.size(2);
  torch::Tensor flat = beams * vocab + tokens;
  EXPECT_TRUE(sums.view({sums.size(0), -1}).gather(1, flat).equal(values));
  EXPECT_TRUE(std::get<0>(flat.sort(1)).diff(1, 1).gt(0).all().item<bool>());
  torch::Tensor unique = values.diff(1, 1).ne(0);
  torch::Tensor untied =
      torch::cat({unique, torch::ones({values.size(0), 1}, torch::kBool)}, 1)
          .logical_and(torch::cat({torch::ones({values.size(0), 1}, torch::kBool), unique}, 1));
  EXPECT_TRUE(
      flat.masked_select(untied).equal((ref_beams * vocab + ref_tokens).masked_select(untied)));
}

TEST(BeamCandidates, EqualTheSumsTopKBitForBit) {
  torch::manual_seed(3);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (int64_t vocab : {1, 7, 64, 65, 1001}) {
      for (int64_t width : {1, 5}) {
        torch::Tensor log_probs = torch::randn({23, width, vocab}).log_softmax(-1);
        torch::Tensor scores = torch::randn({23, width}) * 4;
        for (int64_t count :
             {int64_t{1}, std::min<int64_t>(2 * width, width * vocab), width * vocab}) {
          expect_as_composed(log_probs, scores, count);
        }
      }
    }
  }
}

TEST(BeamCandidates, MaskedTokensAndDeadHypothesesRankLast) {
  // As at search's first step (only hypothesis 0 live) with the forbidden tokens at -inf, and a
  // row where only one token is allowed: fewer finite candidates than asked for come first.
  torch::manual_seed(4);
  torch::Tensor log_probs = torch::randn({4, 3, 300}).log_softmax(-1);
  log_probs.narrow(2, 0, 2).fill_(-kInf);
  log_probs[2].fill_(-kInf);
  log_probs[2].select(1, 2).fill_(-0.5f);
  torch::Tensor scores = torch::randn({4, 3});
  scores[0].narrow(0, 1, 2).fill_(-kInf);
  auto [values, beams, tokens] = beam_candidates(log_probs, scores, 6);
  auto [ref_values, ref_beams, ref_tokens] = composed(log_probs, scores, 6);
  EXPECT_TRUE(values.equal(ref_values));
  for (int64_t n : {0, 1, 3}) {
    EXPECT_TRUE(beams[n].equal(ref_beams[n]));
    EXPECT_TRUE(tokens[n].equal(ref_tokens[n]));
  }
  EXPECT_TRUE(beams[0].eq(0).all().item<bool>());
  // Sentence 2: three finite candidates (token 2 of each hypothesis), then -inf.
  EXPECT_TRUE(tokens[2].narrow(0, 0, 3).eq(2).all().item<bool>());
  EXPECT_TRUE(values[2].narrow(0, 3, 3).eq(-kInf).all().item<bool>());
}

TEST(BeamCandidates, EqualSumsComeInIndexOrderAndNaNFirst) {
  torch::Tensor log_probs = torch::full({1, 2, 100}, -9.0f);
  log_probs[0][1][40] = -1.0f;
  log_probs[0][0][70] = -1.0f;
  log_probs[0][0][10] = -1.0f;
  log_probs[0][1][5] = std::numeric_limits<float>::quiet_NaN();
  auto [values, beams, tokens] = beam_candidates(log_probs, torch::zeros({1, 2}), 5);
  EXPECT_TRUE(std::isnan(values[0][0].item<float>()));
  EXPECT_EQ(beams[0][0].item<int64_t>(), 1);
  EXPECT_EQ(tokens[0][0].item<int64_t>(), 5);
  EXPECT_TRUE(beams[0].narrow(0, 1, 3).equal(torch::tensor({0, 0, 1}, torch::kLong)));
  EXPECT_TRUE(tokens[0].narrow(0, 1, 3).equal(torch::tensor({10, 70, 40}, torch::kLong)));
  EXPECT_TRUE(values[0].narrow(0, 1, 4).equal(torch::tensor({-1.0f, -1.0f, -1.0f, -9.0f})));
  EXPECT_TRUE(beams[0][4].item<int64_t>() == 0 && tokens[0][4].item<int64_t>() == 0);
}

TEST(BeamCandidates, BeamStrategyTakesTheSameCandidatesWithTheKernelOrWithout) {
  torch::manual_seed(5);
  torch::Tensor log_probs = torch::randn({6, 4, 513}).log_softmax(-1);
  torch::Tensor scores = torch::randn({6, 4});
  BeamStrategy strategy(4);
  StepCandidates fused = strategy.step(3, log_probs, scores, {});
  testing::KernelSwitch off(false);
  StepCandidates composed_candidates = strategy.step(3, log_probs, scores, {});
  EXPECT_TRUE(fused.scores.equal(composed_candidates.scores));
  EXPECT_TRUE(fused.beams.equal(composed_candidates.beams));
  EXPECT_TRUE(fused.tokens.equal(composed_candidates.tokens));
}

TEST(BeamCandidates, RefusesWhatItDoesNotTake) {
  torch::Tensor log_probs = torch::zeros({2, 3, 5});
  EXPECT_THROW(beam_candidates(log_probs, torch::zeros({2, 3}), 16), c10::Error);
  EXPECT_THROW(beam_candidates(log_probs, torch::zeros({2, 3}), 0), c10::Error);
  EXPECT_THROW(beam_candidates(log_probs, torch::zeros({3, 2}), 2), c10::Error);
  EXPECT_THROW(beam_candidates(log_probs.to(torch::kDouble), torch::zeros({2, 3}), 2), c10::Error);
  EXPECT_THROW(beam_candidates(log_probs.transpose(1, 2), torch::zeros({2, 5}), 2), c10::Error);
  EXPECT_THROW(beam_candidates(log_probs.view({6, 5}), torch::zeros({6}), 2), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
