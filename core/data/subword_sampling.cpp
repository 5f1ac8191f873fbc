#include "core/data/subword_sampling.h"

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

SubwordSampler::SubwordSampler(const Tokenizers& tokenizers, const TokenizerConfig& config,
                               uint64_t seed, int64_t max_len)
    : tokenizers_(tokenizers),
      alpha_(config.sampling_alpha),
      sample_source_(config.sampling_sides != SamplingSides::kTarget),
      sample_target_(config.sampling_sides != SamplingSides::kSource),
      seed_(seed),
      max_len_(max_len) {}

std::vector<PairTokens> SubwordSampler::pairs(const BinaryDataset& dataset,
                                              const std::vector<int64_t>& indices, int64_t epoch) {
  std::vector<PairTokens> pairs = dataset.pairs(indices);
  if (!enabled()) return pairs;
  sampled_.clear();
  sampled_.reserve(2 * indices.size());  // no reallocation: the views below point into it
  auto resample = [&](TokenSpan& span, const SentencePiece& tokenizer, const std::string& text,
                      int64_t pair, int side) {
    std::vector<int32_t> ids =
        tokenizer.sample_encode(text, alpha_, sampling_seed(seed_, epoch, pair, side));
    if (static_cast<int64_t>(ids.size()) > max_len_) {
      ++length_fallbacks_;
      return;
    }
    sampled_.push_back(std::move(ids));
    span = {sampled_.back().data(), sampled_.back().size()};
  };
  for (size_t i = 0; i < indices.size(); ++i) {
    if (sample_source_) resample(pairs[i].src, *tokenizers_.src, dataset.src_text(indices[i]), indices[i], 0);
    if (sample_target_) resample(pairs[i].tgt, *tokenizers_.tgt, dataset.tgt_text(indices[i]), indices[i], 1);
  }
  return pairs;
}

}  // namespace nmtzoo
