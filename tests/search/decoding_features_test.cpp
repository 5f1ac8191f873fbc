// SPDX-License-Identifier: MIT
// Sampling, target prefixes and the <unk> and coverage penalties, on every tiny architecture
// through the one search.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/search/search.h"
#include "libtorch/search/search_strategy.h"
#include "tests/models/model_fixtures.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

using testing::random_batch;
using testing::tiny_model;

std::vector<SentenceGuide> guides_for_lines(const std::vector<int64_t>& lines) {
  std::vector<SentenceGuide> guides;
  for (int64_t line : lines) {
    SentenceGuide guide;
    guide.line = line;
    guides.push_back(guide);
  }
  return guides;
}

std::vector<std::vector<Hypothesis>> run(EncoderDecoder& model, const testing::TinyBatch& batch,
                                         const SearchOptions& options,
                                         const std::vector<SentenceGuide>& guides) {
  auto strategy = make_strategy(options, guides);
  return search(model, batch.src_tokens, batch.src_pad_mask, options, *strategy, guides);
}

SearchOptions sampling_options(int64_t samples) {
  SearchOptions options;
  options.sampling = true;
  options.nbest = samples;
  options.max_len_b = 12;
  options.seed = 7;
  return options;
}

TEST(Sampling, TheSameSeedRepeatsAndEachLineHasItsOwnGenerator) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({6, 3, 8}, {1, 1, 1}, 41);
    const SearchOptions options = sampling_options(4);
    auto guides = guides_for_lines({10, 11, 12});
    auto first = run(*model, batch, options, guides);
    auto again = run(*model, batch, options, guides);
    for (size_t b = 0; b < first.size(); ++b) {
      ASSERT_EQ(first[b].size(), 4u) << variant << ": nbest samples per sentence";
      for (size_t k = 0; k < first[b].size(); ++k) {
        EXPECT_EQ(first[b][k].tokens, again[b][k].tokens) << variant;
        EXPECT_EQ(first[b][k].score, again[b][k].score) << variant;
      }
    }
    // A sentence alone in its batch, with its own line number, gets the same samples: the output
    // does not depend on batching.
    for (int64_t b = 0; b < 3; ++b) {
      testing::TinyBatch alone{
          batch.src_tokens.narrow(0, b, 1), batch.src_pad_mask.narrow(0, b, 1), {}, {}};
      const int64_t length = alone.src_pad_mask.logical_not().sum().item<int64_t>();
      alone.src_tokens = alone.src_tokens.narrow(1, 0, length);
      alone.src_pad_mask = alone.src_pad_mask.narrow(1, 0, length);
      auto single = run(*model, alone, options, guides_for_lines({10 + b}));
      for (size_t k = 0; k < 4; ++k) {
        EXPECT_EQ(single[0][k].tokens, first[static_cast<size_t>(b)][k].tokens)
            << variant << " sentence " << b;
      }
    }
  }
}

TEST(Sampling, ADifferentSeedOrLineGivesDifferentSamples) {
  auto model = tiny_model("transformer_post");
  auto batch = random_batch({6, 6}, {1, 1}, 42);
  SearchOptions options = sampling_options(8);
  options.temperature = 2.0;  // a flat distribution: samples differ with overwhelming probability
  auto a = run(*model, batch, options, guides_for_lines({1, 2}));
  options.seed = 8;
  auto b = run(*model, batch, options, guides_for_lines({1, 2}));
  auto tokens = [](const std::vector<Hypothesis>& list) {
    std::vector<std::vector<int64_t>> all;
    for (const auto& h : list) all.push_back(h.tokens);
    return all;
  };
  EXPECT_NE(tokens(a[0]), tokens(b[0]));
  EXPECT_NE(tokens(a[0]), tokens(a[1])) << "two lines with the same source sample differently";
}

TEST(Sampling, TopKOfOneEqualsGreedy) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 7, 2}, {1, 1, 1}, 43);
    SearchOptions options = sampling_options(1);
    options.top_k = 1;
    options.temperature = 0.7;
    auto sampled = run(*model, batch, options, guides_for_lines({1, 2, 3}));
    SearchOptions greedy = options;
    greedy.sampling = false;
    greedy.beam = 1;
    auto best = greedy_search(*model, batch.src_tokens, batch.src_pad_mask, greedy);
    for (size_t b = 0; b < best.size(); ++b) {
      EXPECT_EQ(sampled[b][0].tokens, best[b].tokens) << variant;
      EXPECT_NEAR(sampled[b][0].log_prob, best[b].log_prob, 1e-5)
          << variant << ": the model's own log-probabilities";
    }
  }
}

TEST(Sampling, FiltersFollowTopKTopPAndTemperature) {
  // One row: probabilities 0.5, 0.25, 0.15, 0.1.
  at::Tensor log_probs = torch::tensor({0.5f, 0.25f, 0.15f, 0.1f}).log().view({1, 1, 4});
  auto kept = [](const at::Tensor& weights) { return weights.isfinite().view({-1}); };
  SamplingStrategy top_k(1, 1.0, 2, 1.0, 1, {1});
  EXPECT_TRUE(kept(top_k.filtered(log_probs)).equal(torch::tensor({true, true, false, false})));
  // The nucleus of 0.7: 0.5 + 0.25 reaches it; 0.5 alone does not.
  SamplingStrategy top_p(1, 1.0, 0, 0.7, 1, {1});
  EXPECT_TRUE(kept(top_p.filtered(log_probs)).equal(torch::tensor({true, true, false, false})));
  SamplingStrategy nucleus_of_half(1, 1.0, 0, 0.5, 1, {1});
  EXPECT_TRUE(
      kept(nucleus_of_half.filtered(log_probs)).equal(torch::tensor({true, false, false, false})));
  SamplingStrategy hot(1, 2.0, 0, 1.0, 1, {1});
  EXPECT_TRUE(torch::allclose(hot.filtered(log_probs).softmax(-1), (log_probs / 2.0).softmax(-1)));
  // Draws follow the distribution: 4,000 one-step samples of this row.
  std::vector<int64_t> lines(4000);
  for (size_t i = 0; i < lines.size(); ++i) lines[i] = static_cast<int64_t>(i);
  SamplingStrategy plain(1, 1.0, 0, 1.0, 3, lines);
  std::vector<int64_t> sentences(lines.begin(), lines.end());
  StepCandidates c =
      plain.step(0, log_probs.expand({4000, 1, 4}), torch::zeros({4000, 1}), sentences);
  at::Tensor counts = torch::bincount(c.tokens.view({-1}), {}, 4).to(torch::kDouble) / 4000.0;
  EXPECT_TRUE(
      torch::allclose(counts, torch::tensor({0.5, 0.25, 0.15, 0.1}, torch::kDouble), 0, 0.03))
      << counts;
}

TEST(Sampling, TheNucleusOfTheTopTokensEqualsTheNucleusOfTheSortedVocabulary) {
  // Peaked rows keep their nucleus among the 64 most probable tokens; flat rows do not, and take
  // the full sort. Both must give the smallest set reaching p, as a plain sort does.
  torch::manual_seed(5);
  at::Tensor logits = torch::randn({40, 2, 300}) * torch::linspace(0.1, 12.0, 40).view({40, 1, 1});
  at::Tensor log_probs = logits.log_softmax(-1);
  for (double p : {0.3, 0.9, 0.99}) {
    auto [sorted, order] = log_probs.sort(-1, /*descending=*/true);
    at::Tensor probs = sorted.exp();
    at::Tensor dropped = (probs.cumsum(-1) - probs) >= p;
    at::Tensor expected = torch::zeros_like(dropped).scatter(-1, order, dropped).logical_not();
    SamplingStrategy nucleus(1, 1.0, 0, p, 1, {1});
    EXPECT_TRUE(nucleus.filtered(log_probs).isfinite().equal(expected)) << "p = " << p;
  }
}

// The log-probabilities are float32: a temperature whose T or 1/T overflows there made every
// weight 0 or NaN, so nothing could be sampled and every output was empty. The strategy refuses
// those (the schema bounds decoding.temperature to [1e-6, 1e6]); the bounds sample normally.
TEST(Sampling, TemperaturesAtTheBoundsSampleAndThoseThatOverflowFloat32AreRefused) {
  EXPECT_THROW(SamplingStrategy(1, 1e39, 0, 1.0, 1, {1}), c10::Error);
  EXPECT_THROW(SamplingStrategy(1, 1e-39, 0, 1.0, 1, {1}), c10::Error);
  EXPECT_THROW(SamplingStrategy(1, 0.0, 0, 1.0, 1, {1}), c10::Error);
  auto model = tiny_model("transformer_post");
  auto batch = random_batch({5, 3}, {1, 1}, 46);
  for (double temperature : {1e-6, 1e6}) {
    SearchOptions options = sampling_options(3);
    options.temperature = temperature;
    for (const auto& list : run(*model, batch, options, guides_for_lines({1, 2}))) {
      ASSERT_EQ(list.size(), 3u) << "temperature " << temperature;
      for (const auto& h : list) {
        EXPECT_FALSE(h.tokens.empty()) << "temperature " << temperature;
        EXPECT_TRUE(std::isfinite(h.log_prob)) << "temperature " << temperature;
      }
    }
  }
}

TEST(TargetPrefix, EveryHypothesisStartsWithThePrefixVerbatim) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 4}, {1, 1}, 44);
    std::vector<SentenceGuide> guides = guides_for_lines({1, 2});
    guides[0].prefix = {9, 9, 17, 5};
    guides[1].prefix = {};  // no prefix: the search is free
    for (bool sampling : {false, true}) {
      SearchOptions options;
      options.beam = 3;
      options.nbest = 3;
      options.sampling = sampling;
      options.max_len_a = 0;
      options.max_len_b = 2;  // shorter than the prefix: the limit grows by the prefix
      auto results = run(*model, batch, options, guides);
      ASSERT_EQ(results[0].size(), 3u) << variant;
      for (const auto& h : results[0]) {
        ASSERT_GE(h.tokens.size(), 4u) << variant;
        EXPECT_EQ(std::vector<int64_t>(h.tokens.begin(), h.tokens.begin() + 4), guides[0].prefix)
            << variant;
        EXPECT_LE(h.tokens.size(), 6u) << variant;
      }
      // The score is the model's probability of the forced tokens and the rest.
      torch::NoGradGuard no_grad;
      const auto& best = results[0][0].tokens;
      std::vector<int64_t> in{kBosId};
      in.insert(in.end(), best.begin(), best.end());
      std::vector<int64_t> out(best.begin(), best.end());
      out.push_back(kEosId);
      at::Tensor forward =
          model
              ->forward(batch.src_tokens.narrow(0, 0, 1), batch.src_pad_mask.narrow(0, 0, 1),
                        torch::tensor(in).unsqueeze(0))
              .log_softmax(-1);
      const double expected =
          forward.gather(2, torch::tensor(out).view({1, -1, 1})).sum().item<double>();
      EXPECT_NEAR(results[0][0].log_prob, expected, 1e-4) << variant;
    }
  }
}

TEST(Penalties, UnkPenaltyKeepsUnkOutAndCoveragePenaltyFollowsGnmt) {
  auto model = tiny_model("rnn_bahdanau");
  auto batch = random_batch({6, 5, 7}, {1, 1, 1}, 45);
  SearchOptions options;
  options.beam = 4;
  options.nbest = 4;
  options.unk_penalty = -100;  // a reward: <unk> everywhere it may go
  auto rewarded = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
  EXPECT_EQ(rewarded[0][0].tokens.front(), kUnkId);
  options.unk_penalty = 100;
  for (const auto& list : beam_search(*model, batch.src_tokens, batch.src_pad_mask, options)) {
    for (const auto& h : list) {
      EXPECT_EQ(std::count(h.tokens.begin(), h.tokens.end(), kUnkId), 0);
    }
  }
  // The schema's bounds, +-1e6: scores stay finite in float32 (a reward of 1e39 made <unk> +inf,
  // a score no hypothesis survived), and every sentence still ends.
  for (double penalty : {-1e6, 1e6}) {
    options.unk_penalty = penalty;
    for (const auto& list : beam_search(*model, batch.src_tokens, batch.src_pad_mask, options)) {
      ASSERT_EQ(list.size(), 4u) << penalty;
      for (const auto& h : list) EXPECT_TRUE(std::isfinite(h.score)) << penalty;
    }
  }
  options.unk_penalty = 0;
  options.coverage_penalty = 0.4;
  auto covered = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
  const at::Tensor lengths = batch.src_pad_mask.logical_not().sum(1);
  for (size_t b = 0; b < covered.size(); ++b) {
    for (const auto& h : covered[b]) {
      ASSERT_TRUE(h.attention.defined()) << "the penalty records the attention it needs";
      const int64_t source = lengths[static_cast<int64_t>(b)].item<int64_t>();
      const double coverage = h.attention.narrow(1, 0, source)
                                  .sum(0)
                                  .to(torch::kDouble)
                                  .clamp(1e-10, 1.0)
                                  .log()
                                  .sum()
                                  .item<double>();
      const double expected = penalized_score(h.log_prob, static_cast<int64_t>(h.tokens.size()) + 1,
                                              options.length_penalty, options.alpha) +
                              0.4 * coverage;
      EXPECT_NEAR(h.score, expected, 1e-9);
    }
    for (size_t k = 1; k < covered[b].size(); ++k)
      EXPECT_GE(covered[b][k - 1].score, covered[b][k].score);
  }
}

}  // namespace
}  // namespace nmtzoo
