// nmtzoo-prepare: trains the run's tokenizer if missing, then reports corpus statistics.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "apps/common.h"
#include "core/config/loader.h"
#include "core/data/batching.h"
#include "core/data/corpus.h"
#include "core/data/tokenizers.h"
#include "core/runtime/trained_model.h"
#include "models/registry.h"
#include "tokenizer/special_tokens.h"

namespace {

using namespace nmtzoo;

struct SideStats {
  int64_t tokens = 0;
  int64_t longest = 0;
  int64_t unknown = 0;
};

SideStats describe(const std::vector<std::vector<int32_t>>& sentences) {
  SideStats stats;
  for (const auto& sentence : sentences) {
    stats.tokens += static_cast<int64_t>(sentence.size());
    stats.longest = std::max<int64_t>(stats.longest, static_cast<int64_t>(sentence.size()));
    stats.unknown += std::count(sentence.begin(), sentence.end(), static_cast<int32_t>(kUnkId));
  }
  return stats;
}

void print_split(const std::string& name, const ParallelText& text, const TokenizedCorpus& corpus,
                 const RunConfig& config) {
  auto src = describe(corpus.src);
  auto tgt = describe(corpus.tgt);
  const double n = std::max<double>(1.0, static_cast<double>(corpus.size()));
  std::cout << fmt::format(
      "{:<18} {:>7} {:>9} {:>9} {:>6.1f} {:>6.1f} {:>5} {:>5} {:>7.3f}% {:>7.3f}%\n", name,
      corpus.size(), src.tokens, tgt.tokens, static_cast<double>(src.tokens) / n,
      static_cast<double>(tgt.tokens) / n, src.longest, tgt.longest,
      100.0 * static_cast<double>(src.unknown) / std::max<int64_t>(1, src.tokens),
      100.0 * static_cast<double>(tgt.unknown) / std::max<int64_t>(1, tgt.tokens));
  if (text.invalid_utf8_skipped > 0) {
    std::cout << fmt::format("{:<18} skipped {} lines of invalid UTF-8 or with NUL bytes\n", "",
                             text.invalid_utf8_skipped);
  }
  (void)config;
}

int run(const std::string& path, const std::vector<std::string>& overrides) {
  auto start = std::chrono::steady_clock::now();
  register_builtin_models();
  RunConfig config = load_config(path, overrides);
  check_run_config(config);
  save_config(config, config.run_dir() + "/config.yaml");
  Tokenizers tokenizers = prepare_tokenizers(config, std::cerr);

  std::cout << fmt::format("{} -> {} | tokenizer {} ({} pieces{})\n", config.data.src_lang,
                           config.data.tgt_lang, tokenizers.src->path(),
                           tokenizers.src->vocab_size(),
                           tokenizers.joint() ? ", joint" : ", " + tokenizers.tgt->path());
  std::cout << fmt::format("{:<18} {:>7} {:>9} {:>9} {:>6} {:>6} {:>5} {:>5} {:>8} {:>8}\n",
                           "split", "pairs", "src tok", "tgt tok", "src/s", "tgt/s", "src>",
                           "tgt>", "src unk", "tgt unk");
  std::vector<std::string> splits{config.data.train, config.data.valid};
  splits.insert(splits.end(), config.data.test.begin(), config.data.test.end());
  TokenizedCorpus train;
  for (const auto& split : splits) {
    ParallelText text = read_parallel(config.corpus_path(split, config.data.src_lang),
                                      config.corpus_path(split, config.data.tgt_lang),
                                      config.data.invalid_utf8);
    TokenizedCorpus corpus = tokenize(text, *tokenizers.src, *tokenizers.tgt);
    print_split(split, text, corpus, config);
    if (split == config.data.train) train = std::move(corpus);
  }

  FilterStats filtered;
  TokenizedCorpus kept = filter_pairs(
      train, FilterOptions{config.data.max_len, config.data.max_len_ratio, true}, &filtered);
  std::vector<int64_t> lengths;
  int64_t real_tokens = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    auto s = static_cast<int64_t>(kept.src[i].size()) + 1;
    auto t = static_cast<int64_t>(kept.tgt[i].size()) + 1;
    lengths.push_back(std::max(s, t));
    real_tokens += s + t;
  }
  auto batches = make_batches(lengths, {config.training.max_tokens,
                                        static_cast<uint64_t>(config.training.seed), true});
  int64_t padded = 0;
  for (const auto& batch : batches) {
    int64_t longest_src = 0;
    int64_t longest_tgt = 0;
    for (int64_t i : batch) {
      longest_src = std::max<int64_t>(longest_src, static_cast<int64_t>(kept.src[i].size()) + 1);
      longest_tgt = std::max<int64_t>(longest_tgt, static_cast<int64_t>(kept.tgt[i].size()) + 1);
    }
    padded += static_cast<int64_t>(batch.size()) * (longest_src + longest_tgt);
  }
  std::cout << "training filter: " << filtered.summary() << "\n";
  std::cout << fmt::format(
      "batches per epoch at training.max_tokens={}: {} (mean {:.1f} pairs; {:.1f}% of padded "
      "slots hold real tokens)\n",
      config.training.max_tokens, batches.size(),
      static_cast<double>(kept.size()) / std::max<size_t>(1, batches.size()),
      100.0 * static_cast<double>(real_tokens) / std::max<int64_t>(1, padded));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("resolved config: {}/config.yaml | {:.1f} s\n", config.run_dir(),
                           seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train the run's tokenizer if it is missing and print corpus statistics."};
  std::string path;
  std::vector<std::string> overrides;
  app.add_option("-c,--config,config", path, "YAML run config")->required();
  app.add_option("--set", overrides, "override a key, e.g. --set tokenizer.vocab_size=16000")
      ->type_name("KEY=VALUE");
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(path, overrides); });
}
