// SPDX-License-Identifier: MIT
#include "torch_free/data/subword_sampling.h"

#include <gtest/gtest.h>

#include <sstream>

#include "libtorch/train/training_data.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

std::vector<int32_t> ids(const TokenSpan& span) { return {span.begin(), span.end()}; }

// Training data of a tiny run, and a sampler over it built from `overrides`.
struct SamplingFixture {
  explicit SamplingFixture(
      const std::vector<std::string>& overrides = {"tokenizer.sampling_alpha=0.3"})
      : run("transformer", overrides), data(prepare_training_data(run.config(), log)) {}
  SubwordSampler sampler(int64_t max_len = 1000) const {
    return SubwordSampler(data.tokenizers, run.config().tokenizer, 7, max_len);
  }
  std::vector<int64_t> all() const {
    std::vector<int64_t> indices(static_cast<size_t>(data.train->size()));
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(i);
    return indices;
  }
  std::ostringstream log;
  testing::TinyRun run;
  TrainingData data;
};

TEST(SubwordSampler, OffReturnsThePreparedSegmentation) {
  SamplingFixture fixture(std::vector<std::string>{});
  SubwordSampler sampler = fixture.sampler();
  EXPECT_FALSE(sampler.enabled());
  auto indices = fixture.all();
  const SampledPairs result =
      sampler.pairs(*fixture.data.train, indices, 3);  // owns the sampled ids
  const auto& sampled = result.pairs;
  for (size_t i = 0; i < indices.size(); ++i) {
    auto prepared = fixture.data.train->pairs({indices[i]})[0];
    EXPECT_EQ(ids(sampled[i].src), ids(prepared.src));
  }
}

TEST(SubwordSampler, EachEpochResegmentsTheSameTextReproducibly) {
  SamplingFixture fixture;
  SubwordSampler sampler = fixture.sampler();
  ASSERT_TRUE(sampler.enabled());
  const auto& tokenizers = fixture.data.tokenizers;
  auto indices = fixture.all();
  auto snapshot = [&](const SubwordSampler& s, const std::vector<int64_t>& which, int64_t epoch) {
    std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> out;
    for (const auto& pair : s.pairs(*fixture.data.train, which, epoch).pairs)
      out.emplace_back(ids(pair.src), ids(pair.tgt));
    return out;
  };
  auto epoch0 = snapshot(sampler, indices, 0);
  auto epoch1 = snapshot(sampler, indices, 1);
  size_t differing = 0, prepared_differ = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    auto prepared = fixture.data.train->pairs({indices[i]})[0];
    EXPECT_EQ(tokenizers.src->decode(epoch0[i].first), tokenizers.src->decode(ids(prepared.src)));
    EXPECT_EQ(tokenizers.tgt->decode(epoch1[i].second), tokenizers.tgt->decode(ids(prepared.tgt)));
    differing += epoch0[i] != epoch1[i];
    prepared_differ += epoch0[i].first != ids(prepared.src);
  }
  EXPECT_GT(differing, indices.size() / 4) << "epochs sample differently";
  EXPECT_GT(prepared_differ, indices.size() / 4)
      << "and differently from the prepared segmentation";

  // Batching sees exactly these lengths, sampled on several threads.
  auto [src_lengths, tgt_lengths] = sampler.epoch_lengths(*fixture.data.train, 1, 3);
  for (size_t i = 0; i < indices.size(); ++i) {
    EXPECT_EQ(src_lengths[i], static_cast<int32_t>(epoch1[i].first.size()));
    EXPECT_EQ(tgt_lengths[i], static_cast<int32_t>(epoch1[i].second.size()));
  }

  // A fresh sampler, pairs asked in another order and grouping: the same segmentation per pair.
  SubwordSampler again = fixture.sampler();
  std::vector<int64_t> reversed(indices.rbegin(), indices.rbegin() + 10);
  auto subset = snapshot(again, reversed, 1);
  for (size_t i = 0; i < reversed.size(); ++i)
    EXPECT_EQ(subset[i], epoch1[static_cast<size_t>(reversed[i])]);
}

TEST(SubwordSampler, SamplesOnlyTheSidesAsked) {
  SamplingFixture fixture({"tokenizer.sampling_alpha=0.5", "tokenizer.sampling_sides=target"});
  SubwordSampler sampler = fixture.sampler();
  auto indices = fixture.all();
  const SampledPairs result =
      sampler.pairs(*fixture.data.train, indices, 0);  // owns the sampled ids
  const auto& sampled = result.pairs;
  size_t target_differs = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    auto prepared = fixture.data.train->pairs({indices[i]})[0];
    EXPECT_EQ(ids(sampled[i].src), ids(prepared.src));
    target_differs += ids(sampled[i].tgt) != ids(prepared.tgt);
  }
  EXPECT_GT(target_differs, 0u);
}

TEST(SubwordSampler, ASampleLongerThanMaxLenKeepsThePreparedSegmentation) {
  SamplingFixture fixture({"tokenizer.sampling_alpha=0.9"});
  const int64_t max_len = 4;
  SubwordSampler sampler = fixture.sampler(max_len);
  auto indices = fixture.all();
  SampledPairs sampled = sampler.pairs(*fixture.data.train, indices, 0);
  auto [src_lengths, tgt_lengths] = sampler.epoch_lengths(*fixture.data.train, 0, 2);
  int64_t fallbacks = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    auto prepared = fixture.data.train->pairs({indices[i]})[0];
    if (static_cast<int64_t>(sampled.pairs[i].src.size) > max_len) {
      EXPECT_EQ(ids(sampled.pairs[i].src), ids(prepared.src));
      ++fallbacks;
    }
    EXPECT_EQ(src_lengths[i], static_cast<int32_t>(sampled.pairs[i].src.size));
    EXPECT_EQ(tgt_lengths[i], static_cast<int32_t>(sampled.pairs[i].tgt.size));
  }
  EXPECT_GT(fallbacks, 0);
  EXPECT_GE(sampled.length_fallbacks, fallbacks);
}

}  // namespace
}  // namespace nmtzoo
