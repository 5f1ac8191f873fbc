// SPDX-License-Identifier: MIT
// Grouping sentences into batches by a token budget (no tensors here; see batch.h).
#pragma once

#include <cstdint>
#include <vector>

namespace nmtzoo {

struct BatchingOptions {
  int64_t max_tokens = 4096;  // padded tokens per batch: sentences x longest (with BOS/EOS)
  uint64_t seed = 1;
  bool shuffle = true;  // false: keep input order within equal lengths and across batches
};

// Length-bucketed batches: sentences sorted by length (ties broken by a seeded shuffle) are cut
// greedily so that count x longest length <= max_tokens, then the batch order is shuffled with
// (seed, epoch). Every index appears exactly once. `lengths` are per-sentence costs in tokens,
// e.g. max(source, target) + 1 for EOS; a single sentence over the budget gets a batch of its own.
std::vector<std::vector<int64_t>> make_batches(const std::vector<int64_t>& lengths,
                                               const BatchingOptions& options, uint64_t epoch = 0);

// Fisher-Yates with std::mt19937_64, whose output the standard fixes, so a seed gives the same
// order with every compiler and library (std::shuffle's does not).
void seeded_shuffle(std::vector<int64_t>& values, uint64_t seed);

}  // namespace nmtzoo
