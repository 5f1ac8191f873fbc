// SPDX-License-Identifier: MIT
#include "libtorch/search/search.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/search/prefix_recomputing_model.h"
#include "libtorch/search/search_strategy.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/tiny_run.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

using testing::random_batch;
using testing::tiny_model;

// A hand-built model whose next-token distribution depends only on the previous token: a fixed
// table of log-probabilities, so every sequence's probability can be computed by hand.
class MarkovModel : public EncoderDecoder {
 public:
  explicit MarkovModel(at::Tensor log_probs) : table_(std::move(log_probs)) {}
  DecoderState encode(const at::Tensor& src_tokens, const at::Tensor& src_pad_mask) override {
    DecoderState state;
    state.set(kMemorySlot, torch::zeros({src_tokens.size(0), 1, 1}), SlotKind::kSource);
    state.set(kMemoryPadMaskSlot, src_pad_mask, SlotKind::kSource);
    return state;
  }
  at::Tensor decode_step(const at::Tensor& prev_tokens, DecoderState& state) override {
    ++state.step;
    return table_.index_select(0, prev_tokens);
  }
  at::Tensor features(const at::Tensor&, const at::Tensor&, const at::Tensor& tgt_in) override {
    return torch::one_hot(tgt_in, table_.size(0)).to(torch::kFloat);
  }
  at::Tensor output_layer(const at::Tensor& features) override {
    return torch::matmul(features, table_);
  }
  int64_t max_positions() const override { return 100; }
  double sequence_log_prob(const std::vector<int64_t>& tokens) const {
    double total = 0;
    int64_t prev = kBosId;
    for (int64_t token : tokens) {
      total += table_[prev][token].item<double>();
      prev = token;
    }
    return total + table_[prev][kEosId].item<double>();
  }

 private:
  at::Tensor table_;  // (V, V): row = previous token
};

// Exhaustive search over every output of 1..max_len words (ids after EOS).
std::pair<std::vector<int64_t>, double> exhaustive_best(const MarkovModel& model, int64_t vocab,
                                                        int64_t max_len, LengthPenalty penalty) {
  std::vector<int64_t> best;
  double best_score = -INFINITY;
  std::vector<int64_t> current;
  std::function<void()> visit = [&] {
    if (!current.empty()) {
      double score = penalized_score(model.sequence_log_prob(current),
                                     static_cast<int64_t>(current.size()) + 1, penalty, 1.0);
      if (score > best_score) best_score = score, best = current;
    }
    if (static_cast<int64_t>(current.size()) == max_len) return;
    for (int64_t token = kEosId + 1; token < vocab; ++token) {
      current.push_back(token);
      visit();
      current.pop_back();
    }
  };
  visit();
  return {best, best_score};
}

TEST(BeamSearch, BeamAsWideAsTheVocabularyFindsTheExhaustiveBest) {
  const int64_t vocab = 6;  // 4 special tokens + 2 words
  int greedy_was_wrong = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    torch::manual_seed(seed);
    // The toy model never predicts pad, unk or bos: its outputs are words 4 and 5, then EOS.
    auto logits = torch::randn({vocab, vocab}) * 2;
    logits.index_fill_(1, torch::tensor({kPadId, kUnkId, kBosId}), -INFINITY);
    auto table = logits.log_softmax(-1);
    MarkovModel model(table);
    auto src = torch::full({1, 3}, 5, torch::kLong);
    auto pad = torch::zeros({1, 3}, torch::kBool);
    for (auto penalty : {LengthPenalty::kNone, LengthPenalty::kAverage}) {
      SearchOptions options;
      options.beam = vocab;
      options.max_len_a = 0;
      options.max_len_b = 2;
      options.length_penalty = penalty;
      auto [best_tokens, best_score] = exhaustive_best(model, vocab, 2, penalty);
      auto found = beam_search(model, src, pad, options)[0][0];
      EXPECT_EQ(found.tokens, best_tokens) << "seed " << seed;
      EXPECT_NEAR(found.score, best_score, 1e-5) << "seed " << seed;
      options.beam = 1;
      if (greedy_search(model, src, pad, options)[0].tokens != best_tokens) ++greedy_was_wrong;
    }
  }
  EXPECT_GT(greedy_was_wrong, 0) << "the test needs cases where greedy search is not optimal";
}

TEST(BeamSearch, BeamOfOneEqualsGreedy) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 2, 7, 4}, {1, 1, 1, 1}, 12);
    SearchOptions options;
    options.beam = 1;
    options.max_len_b = 8;
    auto greedy = greedy_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    auto beam = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    for (size_t b = 0; b < greedy.size(); ++b) {
      EXPECT_EQ(beam[b][0].tokens, greedy[b].tokens) << variant << " sentence " << b;
      EXPECT_NEAR(beam[b][0].score, greedy[b].score, 1e-4) << variant;
    }
  }
}

TEST(BeamSearch, CachedAndUncachedDecodingGiveIdenticalOutputs) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = tiny_model(variant);
    auto batch = random_batch({5, 3, 6}, {1, 1, 1}, 13);
    SearchOptions options;
    options.beam = 3;
    options.nbest = 3;
    auto cached = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    PrefixRecomputingModel recomputing(model);
    auto uncached = beam_search(recomputing, batch.src_tokens, batch.src_pad_mask, options);
    for (size_t b = 0; b < cached.size(); ++b) {
      ASSERT_EQ(cached[b].size(), uncached[b].size());
      for (size_t k = 0; k < cached[b].size(); ++k) {
        EXPECT_EQ(cached[b][k].tokens, uncached[b][k].tokens) << variant;
        EXPECT_NEAR(cached[b][k].score, uncached[b][k].score, 1e-4) << variant;
      }
    }
  }
}

TEST(BeamSearch, BatchedEqualsOneSentenceAtATime) {
  for (const std::string variant : {"transformer_post", "rnn_bahdanau"}) {
    auto model = tiny_model(variant);
    auto batch = random_batch({6, 2, 9, 4, 3}, {1, 1, 1, 1, 1}, 14);
    SearchOptions options;
    options.beam = 4;
    options.nbest = 2;
    auto together = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    for (int64_t b = 0; b < batch.src_tokens.size(0); ++b) {
      auto length = batch.src_pad_mask[b].logical_not().sum().item<int64_t>();
      auto alone = beam_search(*model, batch.src_tokens[b].narrow(0, 0, length).unsqueeze(0),
                               batch.src_pad_mask[b].narrow(0, 0, length).unsqueeze(0), options);
      for (size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(together[b][k].tokens, alone[0][k].tokens) << variant << " sentence " << b;
        EXPECT_NEAR(together[b][k].score, alone[0][k].score, 1e-4);
      }
    }
  }
}

TEST(BeamSearch, NbestListsAreSortedAndDistinct) {
  auto model = tiny_model("transformer_post");
  auto batch = random_batch({5, 3}, {1, 1}, 15);
  SearchOptions options;
  options.beam = 5;
  options.nbest = 5;
  for (const auto& nbest : beam_search(*model, batch.src_tokens, batch.src_pad_mask, options)) {
    ASSERT_EQ(nbest.size(), 5u);
    for (size_t k = 1; k < nbest.size(); ++k) {
      EXPECT_GE(nbest[k - 1].score, nbest[k].score);
      for (size_t j = 0; j < k; ++j) EXPECT_NE(nbest[j].tokens, nbest[k].tokens);
    }
  }
}

TEST(BeamSearch, LengthLimitsAreRespected) {
  auto model = tiny_model("rnn_luong");
  auto batch = random_batch({8, 2}, {1, 1}, 16);
  SearchOptions options;
  options.max_len_a = 0.5;
  options.max_len_b = 1;
  options.min_len = 2;
  for (int64_t beam : {1, 3}) {
    options.beam = beam;
    auto results = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    EXPECT_LE(results[0][0].tokens.size(), 5u);  // 0.5 * 8 + 1
    EXPECT_EQ(results[1][0].tokens.size(), 2u);  // limit 0.5 * 2 + 1 = 2 = min_len
    for (const auto& nbest : results) EXPECT_GE(nbest[0].tokens.size(), 2u);
  }
}

// A min_len above a sentence's length limit could never be met: the limit forces EOS, min_len
// forbade it, and every hypothesis died (an empty output). It is lowered to the limit.
TEST(BeamSearch, AMinLenAboveTheLengthLimitIsLoweredToIt) {
  for (const std::string variant : {"transformer_post", "rnn_bahdanau"}) {
    auto model = tiny_model(variant);
    auto batch = random_batch({4, 2, 30}, {1, 1, 1}, 19);
    SearchOptions options;
    options.max_len_a = 1;
    options.max_len_b = 1;
    options.min_len = 20;  // limits 4 + 1, 2 + 1 and 30 + 1
    for (int64_t beam : {1, 3}) {
      options.beam = beam;
      options.nbest = beam;
      const auto results = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
      const std::vector<size_t> expected_lengths{5, 3};
      for (size_t b = 0; b < 2; ++b) {
        ASSERT_EQ(results[b].size(), static_cast<size_t>(beam)) << variant << " sentence " << b;
        for (const auto& hypothesis : results[b]) {
          EXPECT_EQ(hypothesis.tokens.size(), expected_lengths[b]) << variant << " beam " << beam;
          EXPECT_TRUE(std::isfinite(hypothesis.score)) << variant;
        }
      }
      // A sentence whose limit allows min_len still gets it: at least 20 tokens.
      ASSERT_FALSE(results[2].empty()) << variant;
      EXPECT_GE(results[2][0].tokens.size(), 20u) << variant;
      EXPECT_LE(results[2][0].tokens.size(), 31u) << variant;
    }
    options.beam = 1;
    options.nbest = 1;
    const auto greedy = greedy_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    EXPECT_EQ(greedy[0].tokens.size(), 5u) << variant;
    EXPECT_EQ(greedy[1].tokens.size(), 3u) << variant;
  }
}

TEST(BeamSearch, OutputLengthLimitsGrowByTheGuideAndStopAtTheModelsPositions) {
  SearchOptions options;
  options.max_len_a = 1.5;
  options.max_len_b = 10;
  SentenceGuide none;
  SentenceGuide guided;
  guided.prefix = {7, 8, 9};
  guided.constraints = {{5, 6}};
  // Source lengths count EOS: 3 tokens, 3 tokens + a 5-token guide, 60 tokens.
  EXPECT_EQ(output_length_limits(64, {4, 4, 61}, options, {none, guided, none}),
            (std::vector<int64_t>{14, 19, 63}));
  EXPECT_EQ(output_length_limits(64, {4}, options), (std::vector<int64_t>{14}));
  options.max_len_a = 0;
  options.max_len_b = 0;
  EXPECT_EQ(output_length_limits(64, {4}, options), (std::vector<int64_t>{1}))
      << "at least one token";
  EXPECT_EQ(effective_min_len(60, 14), 14);
  EXPECT_EQ(effective_min_len(2, 14), 2);
}

// A prefix forced past the model's positions left no allowed token at the limit: an empty output.
// TranslationPipeline refuses such lines naming them; the search itself refuses them too.
TEST(BeamSearch, APrefixLongerThanTheModelsPositionsIsAnError) {
  const int64_t vocab = 6;
  MarkovModel model(
      torch::full({vocab, vocab}, -std::log(static_cast<double>(vocab)), torch::kFloat));
  auto src = torch::full({1, 3}, 5, torch::kLong);
  auto pad = torch::zeros({1, 3}, torch::kBool);
  SearchOptions options;
  options.beam = 2;
  SentenceGuide guide;
  guide.prefix.assign(static_cast<size_t>(model.max_positions()), 4);  // one more than fits
  BeamStrategy strategy(2);
  EXPECT_THROW(search(model, src, pad, options, strategy, {guide}), c10::Error);
  guide.prefix.pop_back();  // exactly what fits: the output is the prefix
  const auto results = search(model, src, pad, options, strategy, {guide});
  ASSERT_FALSE(results[0].empty());
  EXPECT_EQ(results[0][0].tokens, guide.prefix);
}

TEST(BeamSearch, RecordedAttentionHasARowPerOutputToken) {
  auto model = tiny_model("transformer_pre");
  auto batch = random_batch({5, 3}, {1, 1}, 17);
  SearchOptions options;
  options.beam = 3;
  options.record_attention = true;
  auto results = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
  for (size_t b = 0; b < results.size(); ++b) {
    const auto& best = results[b][0];
    ASSERT_TRUE(best.attention.defined());
    EXPECT_EQ(best.attention.size(0), static_cast<int64_t>(best.tokens.size()) + 1);
    EXPECT_TRUE(
        torch::allclose(best.attention.sum(-1), torch::ones({best.attention.size(0)}), 1e-5));
  }
  EXPECT_EQ(results[1][0].attention.narrow(1, 4, 2).abs().sum().item<float>(), 0.0f)
      << "padding gets no attention";
  options.attention.layer = 1;
  options.attention.head = 0;
  auto one_head = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
  EXPECT_EQ(one_head[0][0].tokens, results[0][0].tokens);
  EXPECT_FALSE(one_head[0][0].attention.equal(results[0][0].attention));
}

TEST(BeamSearch, RecordingAttentionOfAModelWithoutAttentionChangesNothing) {
  auto model = tiny_model("rnn_encdec");
  auto batch = random_batch({5, 3}, {1, 1}, 18);
  for (int64_t beam : {1, 3}) {
    SearchOptions options;
    options.beam = beam;
    const auto plain = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    options.record_attention = true;
    const auto recorded = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    const auto greedy = greedy_search(*model, batch.src_tokens, batch.src_pad_mask, options);
    for (size_t b = 0; b < plain.size(); ++b) {
      EXPECT_EQ(recorded[b][0].tokens, plain[b][0].tokens) << "beam " << beam;
      EXPECT_FALSE(recorded[b][0].attention.defined()) << "beam " << beam;
      EXPECT_FALSE(greedy[b].attention.defined());
    }
  }
}

// Weights scaled until the activations overflow: the scores become NaN (or +infinity), which
// used to make beam search ignore its length limit and greedy output unknown tokens.
TEST(BeamSearch, ScoresThatOverflowStopTheSearchNamingTheSentences) {
  for (const std::string variant : {"transformer_post", "rnn_bahdanau"}) {
    auto model = testing::tiny_model(variant);
    testing::make_activations_overflow(*model);
    auto batch = random_batch({5, 7}, {1, 1}, 3);
    for (int64_t beam : {1, 3}) {
      SearchOptions options;
      options.beam = beam;
      try {
        beam_search(*model, batch.src_tokens, batch.src_tokens.eq(kPadId), options);
        ADD_FAILURE() << variant << " beam " << beam << ": no error";
      } catch (const NonFiniteScores& e) {
        EXPECT_EQ(e.step, 0) << variant;
        EXPECT_EQ(e.sentences, (std::vector<int64_t>{0, 1})) << variant;
        EXPECT_NE(std::string(e.what()).find("sentence(s) 0, 1 of the batch: the model's scores "
                                             "are not finite numbers (NaN or infinity) at output "
                                             "token 1"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(LengthPenalty, FollowsTheDefinitions) {
  EXPECT_DOUBLE_EQ(penalized_score(-6.0, 3, LengthPenalty::kNone, 1.0), -6.0);
  EXPECT_DOUBLE_EQ(penalized_score(-6.0, 3, LengthPenalty::kAverage, 1.0), -2.0);
  EXPECT_DOUBLE_EQ(penalized_score(-6.0, 4, LengthPenalty::kAverage, 0.5), -3.0);
  EXPECT_DOUBLE_EQ(penalized_score(-6.0, 7, LengthPenalty::kWu, 1.0), -3.0);  // (5+7)/6 = 2
}

}  // namespace
}  // namespace nmtzoo
