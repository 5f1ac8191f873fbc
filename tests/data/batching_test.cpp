// SPDX-License-Identifier: MIT
#include "torch_free/data/batching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace nmtzoo {
namespace {

std::vector<int64_t> random_lengths(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> lengths(count);
  for (auto& length : lengths) length = 2 + static_cast<int64_t>(rng() % 60);
  return lengths;
}

TEST(Batching, EverySentenceAppearsExactlyOncePerEpoch) {
  auto lengths = random_lengths(5000, 1);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    auto batches = make_batches(lengths, {1000, 7, true}, epoch);
    std::vector<int> seen(lengths.size(), 0);
    for (const auto& batch : batches) {
      for (int64_t i : batch) ++seen[i];
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  }
}

TEST(Batching, PaddedSizeStaysWithinTheTokenBudget) {
  auto lengths = random_lengths(5000, 2);
  for (int64_t budget : {64, 500, 4096}) {
    for (const auto& batch : make_batches(lengths, {budget, 3, true})) {
      int64_t longest = 0;
      for (int64_t i : batch) longest = std::max(longest, lengths[i]);
      EXPECT_LE(longest * static_cast<int64_t>(batch.size()), budget);
    }
  }
}

TEST(Batching, OverlongSentenceGetsABatchOfItsOwn) {
  auto batches = make_batches({5, 500, 5}, {100, 1, false});
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], std::vector<int64_t>{1});
}

TEST(Batching, SameSeedAndEpochGiveTheSameBatches) {
  auto lengths = random_lengths(3000, 3);
  EXPECT_EQ(make_batches(lengths, {800, 5, true}, 2), make_batches(lengths, {800, 5, true}, 2));
  EXPECT_NE(make_batches(lengths, {800, 5, true}, 2), make_batches(lengths, {800, 5, true}, 3));
  EXPECT_NE(make_batches(lengths, {800, 5, true}, 2), make_batches(lengths, {800, 6, true}, 2));
}

TEST(Batching, BucketingKeepsPaddingSmall) {
  auto lengths = random_lengths(5000, 4);
  int64_t real = 0;
  int64_t padded = 0;
  for (const auto& batch : make_batches(lengths, {2000, 1, true})) {
    int64_t longest = 0;
    for (int64_t i : batch) longest = std::max(longest, lengths[i]), real += lengths[i];
    padded += longest * static_cast<int64_t>(batch.size());
  }
  EXPECT_GT(static_cast<double>(real) / static_cast<double>(padded), 0.97);
}

TEST(Batching, WithoutShuffleKeepsInputOrderAmongEqualLengths) {
  auto batches = make_batches({3, 3, 3, 3}, {6, 1, false});
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(batches[1], (std::vector<int64_t>{2, 3}));
}

TEST(SeededShuffle, IsAPermutationFixedBySeed) {
  std::vector<int64_t> a(100);
  std::iota(a.begin(), a.end(), 0);
  auto b = a;
  seeded_shuffle(a, 11);
  seeded_shuffle(b, 11);
  EXPECT_EQ(a, b);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  // Pinned values: the order must not change across compilers and library versions.
  std::vector<int64_t> small{0, 1, 2, 3, 4, 5, 6, 7};
  seeded_shuffle(small, 1);
  EXPECT_EQ(small, (std::vector<int64_t>{4, 6, 3, 5, 1, 7, 2, 0}));
}

}  // namespace
}  // namespace nmtzoo
