// SPDX-License-Identifier: MIT
#include "torch_free/data/subword_sampling.h"

#include <algorithm>
#include <exception>
#include <thread>

namespace nmtzoo {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t sampling_seed(uint64_t seed, int64_t epoch, int64_t pair, int side) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<uint64_t>(epoch));
  h = splitmix64(h ^ static_cast<uint64_t>(pair));
  return splitmix64(h ^ static_cast<uint64_t>(side));
}

}  // namespace

SubwordSampler::SubwordSampler(Tokenizers tokenizers, const TokenizerConfig& config, uint64_t seed,
                               int64_t max_len)
    : tokenizers_(std::move(tokenizers)),
      alpha_(config.sampling_alpha),
      sample_source_(config.sampling_sides != SamplingSides::kTarget),
      sample_target_(config.sampling_sides != SamplingSides::kSource),
      seed_(seed),
      max_len_(max_len) {}

std::optional<std::vector<int32_t>> SubwordSampler::sample(const BinaryDataset& dataset,
                                                           int64_t pair, bool target,
                                                           int64_t epoch) const {
  const SentencePiece& tokenizer = target ? *tokenizers_.tgt : *tokenizers_.src;
  std::vector<int32_t> ids =
      tokenizer.sample_encode(target ? dataset.tgt_text(pair) : dataset.src_text(pair), alpha_,
                              sampling_seed(seed_, epoch, pair, target ? 1 : 0));
  if (static_cast<int64_t>(ids.size()) > max_len_) return std::nullopt;
  return ids;
}

SampledPairs SubwordSampler::pairs(const BinaryDataset& dataset,
                                   const std::vector<int64_t>& indices, int64_t epoch) const {
  SampledPairs result;
  result.pairs = dataset.pairs(indices);
  if (!enabled()) return result;
  result.sampled.reserve(2 * indices.size());  // no reallocation: the views point into it
  auto resample = [&](TokenSpan& span, int64_t pair, bool target) {
    auto ids = sample(dataset, pair, target, epoch);
    if (!ids) {
      ++result.length_fallbacks;
      return;
    }
    result.sampled.push_back(std::move(*ids));
    span = {result.sampled.back().data(), result.sampled.back().size()};
  };
  for (size_t i = 0; i < indices.size(); ++i) {
    if (sample_source_) resample(result.pairs[i].src, indices[i], false);
    if (sample_target_) resample(result.pairs[i].tgt, indices[i], true);
  }
  return result;
}

std::pair<std::vector<int32_t>, std::vector<int32_t>> SubwordSampler::epoch_lengths(
    const BinaryDataset& dataset, int64_t epoch, int threads) const {
  std::vector<int32_t> src = dataset.src_lengths();
  std::vector<int32_t> tgt = dataset.tgt_lengths();
  if (!enabled()) return {src, tgt};
  const int64_t n = dataset.size();
  auto sample_range = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto pair = static_cast<size_t>(i);
      if (sample_source_) {
        if (auto ids = sample(dataset, i, false, epoch))
          src[pair] = static_cast<int32_t>(ids->size());
      }
      if (sample_target_) {
        if (auto ids = sample(dataset, i, true, epoch))
          tgt[pair] = static_cast<int32_t>(ids->size());
      }
    }
  };
  const int64_t workers = std::clamp<int64_t>(threads, 1, std::max<int64_t>(1, n / 1000));
  // A tokenizer error on a worker is rethrown here rather than terminating the process.
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  auto run_share = [&](int64_t w) {
    try {
      sample_range(n * w / workers, n * (w + 1) / workers);
    } catch (...) {
      errors[static_cast<size_t>(w)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(run_share, w);
  run_share(0);
  for (auto& thread : pool) thread.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return {src, tgt};
}

}  // namespace nmtzoo
