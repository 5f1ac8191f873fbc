// SPDX-License-Identifier: MIT
#include "libtorch/search/constrained_beam.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

#include "libtorch/search/search.h"
#include "tests/models/model_fixtures.h"

namespace nmtzoo {
namespace {

// Where `phrase` first occurs contiguously in `tokens` at or after `from`; npos when it does not.
size_t find_phrase(const std::vector<int64_t>& tokens, const std::vector<int64_t>& phrase,
                   size_t from = 0) {
  auto it = std::search(tokens.begin() + static_cast<std::ptrdiff_t>(std::min(from, tokens.size())),
                        tokens.end(), phrase.begin(), phrase.end());
  return it == tokens.end() ? std::string::npos : static_cast<size_t>(it - tokens.begin());
}

ConstraintState feed(const ConstraintTracker& tracker, const std::vector<int64_t>& tokens) {
  ConstraintState state = tracker.initial(0);
  for (int64_t token : tokens) state = tracker.advance(state, token);
  return state;
}

TEST(ConstraintTracker, CountsMetTokensAndAbandonsBrokenPhrases) {
  ConstraintTracker unordered({{{7, 8, 9}, {5}}}, /*ordered=*/false);
  EXPECT_EQ(unordered.met_tokens(feed(unordered, {})), 0);
  EXPECT_EQ(unordered.met_tokens(feed(unordered, {7, 8})), 2);
  EXPECT_EQ(unordered.met_tokens(feed(unordered, {7, 8, 4})), 0) << "a broken phrase is abandoned";
  EXPECT_EQ(unordered.met_tokens(feed(unordered, {7, 7, 8, 9})), 3)
      << "a restart at its first token";
  EXPECT_TRUE(unordered.all_met(feed(unordered, {5, 7, 8, 9})));
  EXPECT_TRUE(unordered.all_met(feed(unordered, {7, 8, 9, 6, 5})));
  EXPECT_EQ(unordered.next_tokens(feed(unordered, {7})), (std::vector<int64_t>{5, 7, 8}));
  EXPECT_TRUE(unordered.next_tokens(feed(unordered, {5, 7, 8, 9})).empty());

  ConstraintTracker ordered({{{7, 8, 9}, {5}}}, /*ordered=*/true);
  EXPECT_FALSE(ordered.all_met(feed(ordered, {5, 7, 8, 9})))
      << "5 before the first phrase does not count";
  EXPECT_TRUE(ordered.all_met(feed(ordered, {7, 8, 9, 5})));
  EXPECT_EQ(ordered.next_tokens(feed(ordered, {})), (std::vector<int64_t>{7}));
  // Repeated phrases must each occur.
  ConstraintTracker twice({{{6}, {6}}}, false);
  EXPECT_FALSE(twice.all_met(feed(twice, {6})));
  EXPECT_TRUE(twice.all_met(feed(twice, {6, 4, 6})));
}

TEST(ConstrainedBeam, EveryConstraintIsMetOnEveryArchitecture) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = testing::tiny_model(variant);
    auto batch = testing::random_batch({6, 4, 7}, {1, 1, 1}, 51);
    std::vector<SentenceGuide> guides(3);
    guides[0].constraints = {{11, 12}, {15}};
    guides[1].constraints = {{20, 21, 22}};
    guides[2].constraints = {};  // a sentence without constraints is searched as usual
    for (ConstraintMode mode : {ConstraintMode::kOrdered, ConstraintMode::kUnordered}) {
      SearchOptions options;
      options.beam = 5;
      options.nbest = 5;
      options.constraints = mode;
      auto strategy = make_strategy(options, guides);
      auto results =
          search(*model, batch.src_tokens, batch.src_pad_mask, options, *strategy, guides);
      for (size_t b = 0; b < 3; ++b) {
        ASSERT_FALSE(results[b].empty()) << variant;
        EXPECT_TRUE(results[b][0].complete) << variant << " sentence " << b;
        for (const auto& h : results[b]) {
          if (!h.complete) continue;  // ended by the length limit, ranked last
          size_t from = 0;
          for (const auto& phrase : guides[b].constraints) {
            size_t at = find_phrase(h.tokens, phrase, mode == ConstraintMode::kOrdered ? from : 0);
            ASSERT_NE(at, std::string::npos)
                << variant << " sentence " << b << " mode " << static_cast<int>(mode) << " tokens "
                << ::testing::PrintToString(h.tokens);
            from = at + phrase.size();
          }
        }
      }
      // Without constraints the search is the plain beam search.
      SearchOptions plain = options;
      plain.constraints = ConstraintMode::kNone;
      auto free = beam_search(*model, batch.src_tokens, batch.src_pad_mask, plain);
      EXPECT_EQ(results[2][0].tokens, free[2][0].tokens) << variant;
    }
  }
}

TEST(ConstrainedBeam, NeedsItsSentencesConstraints) {
  SearchOptions options;
  options.constraints = ConstraintMode::kOrdered;
  EXPECT_THROW(make_strategy(options, {}), c10::Error);
  EXPECT_THROW(ConstraintTracker({{{}}}, false), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
