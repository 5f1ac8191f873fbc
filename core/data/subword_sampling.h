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
#include <vector>

#include "core/config/config.h"
#include "core/data/binary_dataset.h"
#include "core/data/tokenizers.h"

namespace nmtzoo {

class SubwordSampler {
 public:
  // `max_len`: a sampled side longer than this (data.max_len) keeps its prepared segmentation,
  // so sampling never makes a pair the dataset filtered for length.
  SubwordSampler(const Tokenizers& tokenizers, const TokenizerConfig& config, uint64_t seed,
                 int64_t max_len);

  bool enabled() const { return alpha_ > 0 && (sample_source_ || sample_target_); }

  // The pairs `indices` of `dataset` as epoch `epoch` trains on them: re-segmented on the sides
  // tokenizer.sampling_sides names when enabled(), as prepared otherwise. The views stay valid
  // until the next call.
  std::vector<PairTokens> pairs(const BinaryDataset& dataset, const std::vector<int64_t>& indices,
                                int64_t epoch);

  // Sides that kept their prepared segmentation because the sample exceeded max_len, so far.
  int64_t length_fallbacks() const { return length_fallbacks_; }

 private:
  const Tokenizers& tokenizers_;
  double alpha_;
  bool sample_source_;
  bool sample_target_;
  uint64_t seed_;
  int64_t max_len_;
  int64_t length_fallbacks_ = 0;
  std::vector<std::vector<int32_t>> sampled_;  // what the returned views of sampled sides point at
};

}  // namespace nmtzoo
