// SPDX-License-Identifier: MIT
#include "torch_free/data/batching.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

namespace nmtzoo {

void seeded_shuffle(std::vector<int64_t>& values, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = values.size(); i > 1; --i) {
    // Rejection sampling keeps the draw uniform on [0, i).
    const uint64_t bound = static_cast<uint64_t>(i);
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
    uint64_t draw = rng();
    while (draw >= limit) draw = rng();
    std::swap(values[i - 1], values[draw % bound]);
  }
}

std::vector<std::vector<int64_t>> make_batches(const std::vector<int64_t>& lengths,
                                               const BatchingOptions& options, uint64_t epoch) {
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  const uint64_t epoch_seed = options.seed * 1000003ULL + epoch;
  if (options.shuffle) seeded_shuffle(order, epoch_seed);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; });

  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t longest = 0;
  for (int64_t index : order) {
    int64_t candidate_longest = std::max(longest, lengths[index]);
    if (!current.empty() &&
        candidate_longest * static_cast<int64_t>(current.size() + 1) > options.max_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      candidate_longest = lengths[index];
    }
    current.push_back(index);
    longest = candidate_longest;
  }
  if (!current.empty()) batches.push_back(std::move(current));

  if (options.shuffle) {
    std::vector<int64_t> batch_order(batches.size());
    std::iota(batch_order.begin(), batch_order.end(), 0);
    seeded_shuffle(batch_order, epoch_seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<std::vector<int64_t>> shuffled;
    shuffled.reserve(batches.size());
    for (int64_t i : batch_order) shuffled.push_back(std::move(batches[i]));
    batches = std::move(shuffled);
  }
  return batches;
}

}  // namespace nmtzoo
