// SPDX-License-Identifier: MIT
// nmtzoo-prepare: trains the run's tokenizer if missing, prepares the binary dataset (once; again
// only when the config, tokenizer or input files changed), and prints corpus statistics. It starts
// as nmtzoo-train does (libtorch/runtime/run_start.h): the same checks first, then one critical
// section.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <stdexcept>

#include "apps/common.h"
#include "libtorch/runtime/run_start.h"
#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/batching.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/corpus.h"
#include "torch_free/data/dataset_prepare.h"
#include "torch_free/data/tokenizers.h"
#include "torch_free/io/process_stats.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace {

using namespace nmtzoo;

struct SplitStats {
  int64_t pairs = 0;
  int64_t src_tokens = 0;
  int64_t tgt_tokens = 0;
  int64_t src_longest = 0;
  int64_t tgt_longest = 0;
  int64_t src_unknown = 0;
  int64_t tgt_unknown = 0;

  void add(TokenSpan src, TokenSpan tgt) {
    ++pairs;
    src_tokens += static_cast<int64_t>(src.size);
    tgt_tokens += static_cast<int64_t>(tgt.size);
    src_longest = std::max<int64_t>(src_longest, static_cast<int64_t>(src.size));
    tgt_longest = std::max<int64_t>(tgt_longest, static_cast<int64_t>(tgt.size));
    src_unknown += std::count(src.begin(), src.end(), static_cast<int32_t>(kUnkId));
    tgt_unknown += std::count(tgt.begin(), tgt.end(), static_cast<int32_t>(kUnkId));
  }
};

void print_row(const std::string& name, const SplitStats& s) {
  const double n = std::max<double>(1.0, static_cast<double>(s.pairs));
  std::cout << fmt::format(
      "{:<18} {:>9} {:>11} {:>11} {:>6.1f} {:>6.1f} {:>5} {:>5} {:>7.3f}% {:>7.3f}%\n", name,
      s.pairs, s.src_tokens, s.tgt_tokens, static_cast<double>(s.src_tokens) / n,
      static_cast<double>(s.tgt_tokens) / n, s.src_longest, s.tgt_longest,
      100.0 * static_cast<double>(s.src_unknown) /
          static_cast<double>(std::max<int64_t>(1, s.src_tokens)),
      100.0 * static_cast<double>(s.tgt_unknown) /
          static_cast<double>(std::max<int64_t>(1, s.tgt_tokens)));
}

// Statistics of pairs [begin, end) of a prepared split, read in slices so the pages are released.
SplitStats dataset_stats(const BinaryDataset& dataset, int64_t begin, int64_t end) {
  SplitStats stats;
  std::vector<int64_t> slice;
  for (int64_t i = begin; i < end;) {
    slice.resize(static_cast<size_t>(std::min<int64_t>(65536, end - i)));
    std::iota(slice.begin(), slice.end(), i);
    for (const PairTokens& pair : dataset.pairs(slice)) stats.add(pair.src, pair.tgt);
    i += static_cast<int64_t>(slice.size());
  }
  return stats;
}

// What nmtzoo-train will check, checked before anything is written: training.init_from, or, in a
// run folder that holds checkpoints, that the data and tokenizer keys are those the checkpoints
// were trained with, which nmtzoo-train --resume needs them to stay (prepare_run then checks the
// tokenizer itself, as a resume would).
StartCheckpoints check_start_of(const RunConfig& config) {
  const std::string last = config.run_dir() + "/checkpoints/checkpoint_last.pt";
  if (!std::filesystem::exists(last)) return check_start(config);
  StartCheckpoints start;
  start.resume_path = last;
  start.resumed = read_checkpoint_info(last);
  const auto changed = differing_keys(config, start.resumed->config, {"data", "tokenizer"});
  if (!changed.empty()) {
    std::string message = fmt::format(
        "nothing was prepared: run folder '{}' holds checkpoints, which nmtzoo-train --resume "
        "continues only with the data and tokenizer they were trained with (a new run needs a new "
        "training.output_dir); the config's keys differ from '{}':",
        config.run_dir(), last);
    for (const auto& key : changed) message += "\n  " + key;
    throw std::runtime_error(message);
  }
  return start;
}

int run(const std::string& path, const std::vector<std::string>& overrides, bool force,
        int64_t threads, bool quiet) {
  auto start = std::chrono::steady_clock::now();
  register_builtin_models();
  RunConfig config = load_config(path, overrides);
  check_run_config(config);
  resolve_run_paths(config);
  const StartCheckpoints checked = check_start_of(config);
  save_config(config, resolve_arch(config.model.arch), config.run_dir() + "/config.yaml");
  RunPreparation preparation;
  preparation.force = force;
  preparation.dataset.threads = threads;
  preparation.dataset.terminal = ::isatty(STDERR_FILENO) != 0;
  preparation.dataset.progress = !quiet;
  const PreparedRun prepared = prepare_run(config, checked, std::cerr, preparation);
  const Tokenizers& tokenizers = prepared.tokenizers;
  const std::string dir = config.dataset_dir();
  if (prepared.made) {
    const DatasetManifest& made = *prepared.made;
    std::cerr << fmt::format(
        "prepared in {:.1f} s with {} threads ({:.0f} pairs/s), peak RSS {:.0f} MB\n", made.seconds,
        made.threads, static_cast<double>(made.train_pairs) / std::max(1e-9, made.seconds),
        peak_resident_set_mb());
  } else {
    std::cerr << fmt::format("the binary dataset in {} is up to date\n", dir);
  }
  const DatasetManifest manifest = read_manifest(dir);

  std::string directions;
  for (const auto& pair : config.language_pairs())
    directions += (directions.empty() ? "" : ", ") + pair.src + " -> " + pair.tgt;
  std::cout << fmt::format("{} | tokenizer {} ({} pieces{}) | dataset {}\n", directions,
                           tokenizers.src->path(), tokenizers.src->vocab_size(),
                           tokenizers.joint() ? ", joint" : ", " + tokenizers.tgt->path(), dir);
  std::cout << fmt::format("{:<18} {:>9} {:>11} {:>11} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8}\n",
                           "split", "pairs", "src tok", "tgt tok", "src/s", "tgt/s", "src>", "tgt>",
                           "src unk", "tgt unk");
  BinaryDataset train(dir, "train", tokenizers.src->vocab_size(), tokenizers.tgt->vocab_size());
  for (const PreparedCorpus& corpus : manifest.corpora) {
    train.check_pair_range(corpus.begin, corpus.end,
                           fmt::format("corpus '{}' of {}/dataset.json", corpus.split, dir));
    print_row(corpus.split, dataset_stats(train, corpus.begin, corpus.end));
    std::cout << fmt::format("{:<18} {} lines: {}{}\n", "", corpus.lines, corpus.filtered.summary(),
                             corpus.invalid_utf8_skipped > 0
                                 ? fmt::format("; {} skipped as invalid UTF-8 or with NUL bytes",
                                               corpus.invalid_utf8_skipped)
                                 : "");
  }
  BinaryDataset valid(dir, "valid", tokenizers.src->vocab_size(), tokenizers.tgt->vocab_size());
  print_row(config.data.valid, dataset_stats(valid, 0, valid.size()));
  for (const auto& split : config.data.test) {
    for (const auto& pair : config.language_pairs()) {
      ParallelText text =
          read_parallel(config.corpus_path(split, pair.src), config.corpus_path(split, pair.tgt),
                        InvalidUtf8Policy::kError);
      TokenizedCorpus corpus = tokenize(text, *tokenizers.src, *tokenizers.tgt);
      SplitStats stats;
      for (size_t i = 0; i < corpus.size(); ++i) {
        stats.add({corpus.src[i].data(), corpus.src[i].size()},
                  {corpus.tgt[i].data(), corpus.tgt[i].size()});
      }
      print_row(config.multilingual() ? split + " " + pair.name() : split, stats);
    }
  }

  std::vector<int64_t> lengths(static_cast<size_t>(train.size()));
  int64_t real_tokens = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = std::max(train.src_lengths()[i], train.tgt_lengths()[i]) + 1;
    real_tokens += train.src_lengths()[i] + train.tgt_lengths()[i] + 2;
  }
  auto batches = make_batches(
      lengths, {config.training.max_tokens, static_cast<uint64_t>(config.training.seed), true});
  int64_t padded = 0;
  for (const auto& batch : batches) {
    int64_t longest_src = 0;
    int64_t longest_tgt = 0;
    for (int64_t i : batch) {
      longest_src = std::max<int64_t>(longest_src, train.src_lengths()[static_cast<size_t>(i)] + 1);
      longest_tgt = std::max<int64_t>(longest_tgt, train.tgt_lengths()[static_cast<size_t>(i)] + 1);
    }
    padded += static_cast<int64_t>(batch.size()) * (longest_src + longest_tgt);
  }
  std::cout << fmt::format(
      "batches per epoch at training.max_tokens={}: {} (mean {:.1f} pairs; {:.1f}% of padded "
      "slots hold real tokens)\n",
      config.training.max_tokens, batches.size(),
      static_cast<double>(train.size()) / static_cast<double>(std::max<size_t>(1, batches.size())),
      100.0 * static_cast<double>(real_tokens) / static_cast<double>(std::max<int64_t>(1, padded)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("resolved config: {}/config.yaml | {:.1f} s | peak RSS {:.0f} MB\n",
                           config.run_dir(), seconds, peak_resident_set_mb());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Train the run's tokenizer if it is missing, prepare the binary dataset that "
      "nmtzoo-train reads (when missing or stale) and print corpus statistics."};
  std::string path;
  std::vector<std::string> overrides;
  bool force = false;
  bool quiet = false;
  int64_t threads = 0;
  app.add_option("-c,--config,config", path, "YAML run config")->required();
  app.add_option("--set", overrides, "override a key, e.g. --set tokenizer.vocab_size=16000")
      ->type_name("KEY=VALUE");
  app.add_flag("--force", force, "prepare the dataset again even when it is up to date");
  app.add_option("--threads", threads, "tokenizing threads; 0 = every core")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("-q,--quiet", quiet, "no progress display");
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(path, overrides, force, threads, quiet); });
}
