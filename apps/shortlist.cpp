// SPDX-License-Identifier: MIT
// nmtzoo-shortlist: learns a lexical shortlist (libtorch/search/shortlist.h) for a trained model
// from its training pairs, tokenized with the checkpoint's own tokenizers. Decoding uses it through
// decoding.shortlist / --shortlist.
#include <c10/core/DeviceType.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

#include "apps/common.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/shortlist.h"
#include "torch_free/archs/registry.h"
#include "torch_free/data/corpus.h"
#include "torch_free/io/atomic_file.h"

namespace {

using namespace nmtzoo;

struct Options {
  std::string checkpoint;
  std::string output;
  std::vector<std::string> sources;
  std::vector<std::string> targets;
  int64_t max_pairs = 2'000'000;
  int64_t threads = 0;
  ShortlistTraining training;
};

// Up to `max_pairs` pairs of the files, tokenized; unusable text is an error naming the line, or
// skipped when the run's data.invalid_utf8 says so.
TokenizedCorpus read_pairs(const Options& options, const TrainedModel& trained) {
  TokenizedCorpus corpus;
  for (size_t f = 0; f < options.sources.size(); ++f) {
    ParallelLineReader reader(options.sources[f], options.targets[f]);
    std::string src;
    std::string tgt;
    while (static_cast<int64_t>(corpus.size()) < options.max_pairs && reader.next(src, tgt)) {
      std::string problem =
          pair_text_problem(src, tgt, options.sources[f], options.targets[f], reader.line_number());
      if (!problem.empty()) {
        if (trained.config.data.invalid_utf8 == InvalidUtf8Policy::kSkip) continue;
        throw DataError(problem);
      }
      corpus.src.push_back(trained.tokenizers.src->encode(src));
      corpus.tgt.push_back(trained.tokenizers.tgt->encode(tgt));
    }
  }
  return corpus;
}

int run(Options options) {
  const auto start = std::chrono::steady_clock::now();
  configure_threads(options.threads);
  TrainedModel trained = load_trained_model(options.checkpoint, c10::kCPU);
  const RunConfig& config = trained.config;
  if (config.multilingual()) {
    // Its sources carry target tags, and one shortlist would mix the target languages.
    throw std::runtime_error(options.checkpoint +
                             " is a multilingual model (data.directions): "
                             "nmtzoo-shortlist learns shortlists of bilingual models only");
  }
  if (options.sources.empty() && options.targets.empty()) {
    for (const auto& corpus : config.data.train) {
      options.sources.push_back(config.corpus_path(corpus.split, config.data.src_lang));
      options.targets.push_back(config.corpus_path(corpus.split, config.data.tgt_lang));
    }
  }
  if (options.sources.size() != options.targets.size()) {
    throw std::runtime_error(fmt::format("--source given {} times but --target {} times",
                                         options.sources.size(), options.targets.size()));
  }
  std::vector<NamedPath> inputs{{"checkpoint", options.checkpoint}};
  for (const auto& path : options.sources) inputs.push_back({"--source", path});
  for (const auto& path : options.targets) inputs.push_back({"--target", path});
  check_output_is_not_an_input({"-o", options.output}, inputs);
  const TokenizedCorpus corpus = read_pairs(options, trained);
  if (corpus.size() == 0) throw std::runtime_error("no training pairs to learn a shortlist from");
  const auto read = std::chrono::steady_clock::now();
  PairVisitor visit = [&corpus](const std::function<void(TokenSpan, TokenSpan)>& each) {
    for (size_t i = 0; i < corpus.size(); ++i) {
      each({corpus.src[i].data(), corpus.src[i].size()},
           {corpus.tgt[i].data(), corpus.tgt[i].size()});
    }
  };
  Shortlist shortlist = Shortlist::train(visit, trained.tokenizers.src->vocab_size(),
                                         trained.tokenizers.tgt->vocab_size(), options.training);
  shortlist.save(options.output, trained.tokenizers);
  const auto done = std::chrono::steady_clock::now();
  int64_t entries = 0;
  for (int64_t s = 0; s < trained.tokenizers.src->vocab_size(); ++s) {
    entries += static_cast<int64_t>(shortlist.candidates(s).size());
  }
  std::cerr << fmt::format(
      "shortlist: {} pairs read and tokenized in {:.1f} s, IBM Model 1 ({} iterations) in {:.1f} "
      "s; "
      "{} candidates over {} source tokens, {} frequent target tokens -> {}\n",
      corpus.size(), std::chrono::duration<double>(read - start).count(),
      options.training.iterations, std::chrono::duration<double>(done - read).count(), entries,
      trained.tokenizers.src->vocab_size(), shortlist.frequent().size(), options.output);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Learn a lexical shortlist for a model from parallel text (IBM Model 1), for faster decoding "
      "with decoding.shortlist."};
  Options options;
  app.add_option("checkpoint", options.checkpoint,
                 "the model whose tokenizers the shortlist is for")
      ->required();
  app.add_option("-o,--output", options.output, "the shortlist file to write")->required();
  app.add_option(
      "--source", options.sources,
      "source side of the training text (plain or gzip); default: the run's training corpora");
  app.add_option("--target", options.targets, "target side, one per --source");
  app.add_option("--max-pairs", options.max_pairs, "read at most this many pairs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--iterations", options.training.iterations, "EM iterations of IBM Model 1")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--candidates", options.training.candidates, "target tokens kept per source token")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-probability", options.training.min_probability,
                 "... with at least this p(target | source)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--frequent", options.training.frequent, "most frequent target tokens kept")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--threads", options.threads, "intra-op threads (0 = the default)");
  CLI11_PARSE(app, argc, argv);
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(options); });
}
