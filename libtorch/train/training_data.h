// SPDX-License-Identifier: MIT
// What a training run reads before its first update: the tokenizers (trained first when missing),
// the binary dataset (prepared first when missing or stale) memory-mapped, and the validation set.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/corpus.h"
#include "torch_free/data/dataset_prepare.h"
#include "torch_free/data/subword_sampling.h"
#include "torch_free/data/tokenizers.h"
#include "torch_free/data/translation_input.h"

namespace nmtzoo {

class Communicator;
struct StartCheckpoints;

// A training corpus's pairs in the dataset and its sampling rate per epoch.
struct CorpusShare {
  std::string split;
  int64_t begin = 0;
  int64_t end = 0;
  double weight = 1.0;
};

struct TrainingData {
  Tokenizers tokenizers;
  std::string tokenizer_fingerprint;
  std::shared_ptr<const BinaryDataset> train;     // tokens on disk, lengths in memory
  std::shared_ptr<const SubwordSampler> sampler;  // how each epoch segments `train`
  std::vector<CorpusShare> corpora;
  FilterStats filtered;   // over every training corpus
  TokenizedCorpus valid;  // cut to the model's length limit
  std::vector<TranslationRequest>
      valid_requests;  // sources with their target language (multilingual)
  std::vector<std::string> valid_references;
};

// Rank 0 (or the only process) trains missing tokenizers and prepares a missing or stale dataset
// (prepare_run, libtorch/runtime/run_start.h: one critical section, after the checks of `start`, or
// of check_start(config) when null) while the other ranks wait, then every rank maps it. `held_dir`
// is a folder the caller has locked already (its run folder). Errors name the file and line of bad
// data; no training pair left after filtering is an error.
TrainingData prepare_training_data(const RunConfig& config, std::ostream& log,
                                   Communicator* communicator = nullptr, bool terminal = false,
                                   const StartCheckpoints* start = nullptr,
                                   const std::string& held_dir = "");

// The pairs an epoch trains on: each corpus `weight` times (a fraction: that share of it, drawn
// anew each epoch from (seed, epoch)), in dataset order before batching shuffles them.
std::vector<int64_t> epoch_pairs(const std::vector<CorpusShare>& corpora, uint64_t seed,
                                 uint64_t epoch);

// The epoch's length-bucketed, shuffled batches of dataset pair indices (see make_batches), by
// the lengths the epoch trains on (data.sampler's, when subword sampling is on).
std::vector<std::vector<int64_t>> epoch_batches(const TrainingData& data, int64_t max_tokens,
                                                uint64_t seed, uint64_t epoch);

}  // namespace nmtzoo
