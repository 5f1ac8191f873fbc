// SPDX-License-Identifier: MIT
// Subword regularization of training pairs (Kudo 2018 for unigram models; BPE-dropout, Provilkov
// et al. 2020): every epoch each training sentence gets a fresh segmentation, sampled from its
// text, which the binary dataset keeps beside the ids (<split>.raw). Validation and test data are
// never sampled.
//
// Why from text rather than from alternatives cached at preparation: a 60-minute Multi30k run sees
// each pair ~50 times, so a cache would need ~50 segmentations per sentence (50x the token file)
// to give every epoch its own, and a smaller cache repeats them; sampling from text costs
// SentencePiece's SampleEncode per sentence (tens of microseconds), a few percent of an update.
//
// A segmentation depends only on (training.seed, epoch, pair, side): resuming mid-epoch, or
// splitting batches over ranks, samples exactly what an uninterrupted run would.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {

// Pairs as an epoch trains on them; the views point into `sampled` (or the dataset's map) and
// stay valid while this object lives and the dataset is not read again.
struct SampledPairs {
  std::vector<PairTokens> pairs;
  std::vector<std::vector<int32_t>> sampled;
  int64_t length_fallbacks = 0;  // sides that kept the prepared segmentation (sample over max_len)
};

class SubwordSampler {
 public:
  // `max_len`: a sampled side longer than this (data.max_len) keeps its prepared segmentation,
  // so sampling never makes a pair the dataset filtered for length.
  SubwordSampler(Tokenizers tokenizers, const TokenizerConfig& config, uint64_t seed,
                 int64_t max_len);

  bool enabled() const { return alpha_ > 0 && (sample_source_ || sample_target_); }

  // The pairs `indices` of `dataset` as epoch `epoch` trains on them: re-segmented on the sides
  // tokenizer.sampling_sides names when enabled(), as prepared otherwise.
  SampledPairs pairs(const BinaryDataset& dataset, const std::vector<int64_t>& indices,
                     int64_t epoch) const;

  // Source and target lengths of every pair of `dataset` in epoch `epoch` (what pairs() gives),
  // for batching by the tokens actually trained on: BPE-dropout lengthens sentences (by ~40% at
  // alpha 0.1 with Multi30k's 8k BPE). Sampled on `threads` threads; the segmentations are
  // sampled again, identically, when their batch is read, so memory stays one length per pair.
  std::pair<std::vector<int32_t>, std::vector<int32_t>> epoch_lengths(const BinaryDataset& dataset,
                                                                      int64_t epoch,
                                                                      int threads) const;

 private:
  // The sampled ids of one side, or nullopt when they exceed max_len.
  std::optional<std::vector<int32_t>> sample(const BinaryDataset& dataset, int64_t pair,
                                             bool target, int64_t epoch) const;

  Tokenizers tokenizers_;
  double alpha_;
  bool sample_source_;
  bool sample_target_;
  uint64_t seed_;
  int64_t max_len_;
};

}  // namespace nmtzoo
