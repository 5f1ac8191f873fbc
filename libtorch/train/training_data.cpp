// SPDX-License-Identifier: MIT
#include "libtorch/train/training_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>

#include "libtorch/runtime/run_start.h"
#include "libtorch/train/distributed.h"
#include "torch_free/common/cpu_cores.h"
#include "torch_free/data/batching.h"

namespace nmtzoo {
namespace {

// On rank 0 (or the only process): the tokenizers, then the dataset when it is missing or stale,
// after what `start` says of the checkpoint the run starts from was checked against them.
void prepare_on_main(const RunConfig& config, std::ostream& log, bool terminal,
                     const StartCheckpoints& start, const std::string& held_dir) {
  RunPreparation options;
  options.what = "nmtzoo-train";
  options.held_dir = held_dir;
  options.dataset.threads = config.training.threads;
  options.dataset.terminal = terminal;
  const PreparedRun prepared = prepare_run(config, start, log, options);
  if (!prepared.made) return;
  const DatasetManifest& manifest = *prepared.made;
  log << fmt::format(
      "prepared {} training pairs ({} tokens) and {} validation pairs in {:.1f} s "
      "({:.0f} pairs/s)\n",
      manifest.train_pairs, manifest.train_tokens, manifest.valid_pairs, manifest.seconds,
      static_cast<double>(manifest.train_pairs + manifest.valid_pairs) /
          std::max(1e-9, manifest.seconds));
}

// The language whose tag a validation pair's source starts with: the target its reference is in
// ("" for a bilingual run, which tags nothing).
std::string tagged_target(const TargetTags& tags, const TokenSpan& src, const std::string& dataset,
                          int64_t index) {
  if (!tags.tagged) return "";
  for (const auto& [lang, prefix] : tags.prefixes) {
    if (src.size >= prefix.size() && std::equal(prefix.begin(), prefix.end(), src.begin()))
      return lang;
  }
  throw DataError(
      fmt::format("validation pair {} of '{}' starts with none of the target tags of {}: "
                  "delete the dataset to prepare it again",
                  index + 1, dataset, tags.targets()));
}

}  // namespace

TrainingData prepare_training_data(const RunConfig& config, std::ostream& log,
                                   Communicator* communicator, bool terminal,
                                   const StartCheckpoints* start, const std::string& held_dir) {
  auto work = [&] {
    const StartCheckpoints checked = start != nullptr ? StartCheckpoints{} : check_start(config);
    prepare_on_main(config, log, terminal, start != nullptr ? *start : checked, held_dir);
  };
  if (communicator != nullptr) {
    communicator->run_on_main(work, "prepares the tokenizers and the dataset");
  } else {
    work();
  }
  TrainingData data;
  data.tokenizers = load_tokenizers(config);
  data.tokenizer_fingerprint = tokenizer_fingerprint(data.tokenizers);
  const std::string dir = config.dataset_dir();
  const std::string stale = dataset_staleness(config, data.tokenizer_fingerprint);
  if (!stale.empty()) throw DataError("cannot use the binary dataset: " + stale);
  DatasetManifest manifest = read_manifest(dir);
  const int64_t src_vocab = data.tokenizers.src->vocab_size();
  const int64_t tgt_vocab = data.tokenizers.tgt->vocab_size();
  data.train = std::make_shared<BinaryDataset>(dir, "train", src_vocab, tgt_vocab);
  data.sampler = std::make_shared<SubwordSampler>(data.tokenizers, config.tokenizer,
                                                  static_cast<uint64_t>(config.training.seed),
                                                  config.data.max_len);
  if (data.train->size() != manifest.train_pairs) {
    throw DataError(fmt::format("binary dataset '{}' holds {} training pairs, its manifest says {}",
                                dir, data.train->size(), manifest.train_pairs));
  }
  const DataConfig& d = config.data;
  // One prepared corpus a training corpus and direction, directions innermost.
  const size_t directions = config.language_pairs().size();
  for (size_t i = 0; i < d.train.size() * directions; ++i) {
    const PreparedCorpus& prepared = manifest.corpora.at(i);
    data.train->check_pair_range(
        prepared.begin, prepared.end,
        fmt::format("corpus '{}' of {}/dataset.json", prepared.split, dir));
    data.corpora.push_back(
        {prepared.split, prepared.begin, prepared.end, d.train[i / directions].weight});
    data.filtered += prepared.filtered;
  }
  if (data.train->size() == 0) {
    throw DataError(
        fmt::format("no training pairs left after filtering the training corpora in "
                    "'{}' (data.max_len {}, data.max_len_ratio {})",
                    d.dir, d.max_len, d.max_len_ratio));
  }

  BinaryDataset valid(dir, "valid", src_vocab, tgt_vocab);
  if (valid.size() == 0) {
    throw DataError("the validation set '" + config.corpus_path(d.valid, d.src_lang) +
                    "' is empty");
  }
  const auto max_tokens = static_cast<size_t>(config.model.max_positions - 1);
  std::vector<int64_t> all(static_cast<size_t>(valid.size()));
  std::iota(all.begin(), all.end(), 0);
  std::vector<PairTokens> pairs = valid.pairs(all);
  for (int64_t i = 0; i < valid.size(); ++i) {
    const PairTokens& pair = pairs[static_cast<size_t>(i)];
    data.valid.src.emplace_back(pair.src.begin(),
                                pair.src.begin() + std::min(pair.src.size, max_tokens));
    data.valid.tgt.emplace_back(pair.tgt.begin(),
                                pair.tgt.begin() + std::min(pair.tgt.size, max_tokens));
    data.valid_requests.push_back(
        {valid.src_text(i), {}, {}, tagged_target(data.tokenizers.tags, pair.src, dir, i)});
    data.valid_references.push_back(valid.tgt_text(i));
  }
  return data;
}

std::vector<int64_t> epoch_pairs(const std::vector<CorpusShare>& corpora, uint64_t seed,
                                 uint64_t epoch) {
  std::vector<int64_t> pairs;
  for (size_t c = 0; c < corpora.size(); ++c) {
    const CorpusShare& corpus = corpora[c];
    const int64_t n = corpus.end - corpus.begin;
    const auto copies = static_cast<int64_t>(std::floor(corpus.weight));
    for (int64_t copy = 0; copy < copies; ++copy) {
      for (int64_t i = corpus.begin; i < corpus.end; ++i) pairs.push_back(i);
    }
    const auto extra = static_cast<int64_t>(
        std::llround((corpus.weight - static_cast<double>(copies)) * static_cast<double>(n)));
    if (extra > 0) {
      std::vector<int64_t> sample(static_cast<size_t>(n));
      std::iota(sample.begin(), sample.end(), corpus.begin);
      seeded_shuffle(sample, (seed * 1000003ULL + epoch) * 31ULL + c + 1);
      sample.resize(static_cast<size_t>(extra));
      std::sort(sample.begin(), sample.end());
      pairs.insert(pairs.end(), sample.begin(), sample.end());
    }
  }
  return pairs;
}

std::vector<std::vector<int64_t>> epoch_batches(const TrainingData& data, int64_t max_tokens,
                                                uint64_t seed, uint64_t epoch) {
  std::vector<int32_t> sampled_src;
  std::vector<int32_t> sampled_tgt;
  if (data.sampler && data.sampler->enabled()) {
    const auto threads = static_cast<int>(available_cores());
    std::tie(sampled_src, sampled_tgt) =
        data.sampler->epoch_lengths(*data.train, static_cast<int64_t>(epoch), threads);
  }
  const auto& src = sampled_src.empty() ? data.train->src_lengths() : sampled_src;
  const auto& tgt = sampled_tgt.empty() ? data.train->tgt_lengths() : sampled_tgt;
  const bool every_pair_once = std::all_of(data.corpora.begin(), data.corpora.end(),
                                           [](const CorpusShare& c) { return c.weight == 1.0; });
  std::vector<int64_t> pairs;
  if (!every_pair_once) pairs = epoch_pairs(data.corpora, seed, epoch);
  const size_t n = every_pair_once ? src.size() : pairs.size();
  std::vector<int64_t> lengths(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t pair = every_pair_once ? i : static_cast<size_t>(pairs[i]);
    lengths[i] = std::max<int64_t>(src[pair], tgt[pair]) + 1;
  }
  auto batches = make_batches(lengths, {max_tokens, seed, true}, epoch);
  if (!every_pair_once) {
    for (auto& batch : batches) {
      for (auto& index : batch) index = pairs[static_cast<size_t>(index)];
    }
  }
  return batches;
}

}  // namespace nmtzoo
