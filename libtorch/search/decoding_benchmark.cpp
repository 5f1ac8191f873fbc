// SPDX-License-Identifier: MIT
#include "libtorch/search/decoding_benchmark.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "libtorch/kernels/int8_linear.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/chrome_trace.h"
#include "libtorch/runtime/weights.h"
#include "libtorch/search/translator.h"
#include "torch_free/data/corpus.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void write_json(const std::string& path, const nlohmann::json& value) {
  write_file_atomically(path, [&](std::ostream& out) { out << value.dump(); });
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

const char* dtype_suffix(DecodeDtype dtype) {
  switch (dtype) {
    case DecodeDtype::kFloat32:
      return "";
    case DecodeDtype::kBf16:
      return "_bf16";
    case DecodeDtype::kInt8:
      return "_int8";
  }
  return "";
}

// Sentences translated one at a time, as an interactive user sends them: greedy, each call timed
// from text to text (tokenization included), after 20 untimed warm-up sentences; per dtype.
nlohmann::json benchmark_latency(const DecodingBenchmarkOptions& cli, Translator& translator,
                                 const std::vector<std::string>& sources, std::ostream& out) {
  constexpr size_t kWarmup = 20;
  nlohmann::json results = nlohmann::json::array();
  std::vector<DecodeDtype> dtypes{DecodeDtype::kFloat32};
  if (cli.bf16_decoding) dtypes.push_back(DecodeDtype::kBf16);
  if (cli.int8_decoding) dtypes.push_back(DecodeDtype::kInt8);
  std::vector<std::pair<DecodeDtype, bool>> variants;  // dtype, with the shortlist
  for (DecodeDtype dtype : dtypes) variants.emplace_back(dtype, false);
  if (!cli.shortlist.empty()) {
    variants.emplace_back(DecodeDtype::kFloat32, true);
    if (cli.int8_decoding) variants.emplace_back(DecodeDtype::kInt8, true);
  }
  for (const auto& [dtype, shortlisted] : variants) {
    SearchOptions options = translator.search_options();
    options.beam = 1;
    options.nbest = 1;
    options.dtype = dtype;
    options.shortlist = shortlisted ? cli.shortlist : "";
    for (size_t i = 0; i < std::min(kWarmup, sources.size()); ++i)
      translator.translate_batch({sources[i]}, options);
    std::vector<double> ms;
    for (const auto& source : sources) {
      const auto start = Clock::now();
      translator.translate_batch({source}, options);
      ms.push_back(1000.0 * seconds_since(start));
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    auto quantile = [&](double q) {
      return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
    };
    double total = 0;
    for (double m : ms) total += m;
    const std::string suffix =
        std::string(dtype_suffix(dtype)) + (shortlisted ? ", shortlist" : "");
    const std::string name = "latency, greedy, one sentence per call" + suffix;
    results.push_back({{"mode", name},
                       {"sentences", ms.size()},
                       {"median_ms", quantile(0.5)},
                       {"p90_ms", quantile(0.9)},
                       {"mean_ms", total / static_cast<double>(ms.size())},
                       {"threads", torch::get_num_threads()}});
    out << fmt::format(
        "latency    {:<31} median {:6.2f} ms  p90 {:6.2f} ms  mean {:6.2f} ms ({} sentences, {} "
        "threads)\n",
        "greedy, 1 sentence/call" + suffix, quantile(0.5), quantile(0.9),
        total / static_cast<double>(ms.size()), ms.size(), torch::get_num_threads());
  }
  return results;
}

}  // namespace

nlohmann::json benchmark_decoding(const DecodingBenchmarkOptions& cli, std::ostream& out) {
  Translator cached({cli.checkpoint});
  Translator uncached(cached.members(), cached.paths(), TranslatorOptions().recompute_prefix(true));
  const RunConfig& config = cached.config();
  const TrainedModel& trained = cached.members().front();
  ParallelText test = read_parallel(config.corpus_path(cli.test_split, config.data.src_lang),
                                    config.corpus_path(cli.test_split, config.data.tgt_lang));
  std::vector<std::string> sources = test.src;
  if (cli.sentences > 0 && static_cast<size_t>(cli.sentences) < sources.size())
    sources.resize(cli.sentences);
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json greedy_ids = nlohmann::json::array();  // for the Python peer's cross-check
  struct Mode {
    std::string name;
    int64_t beam;
    bool cache;
    int64_t batch_tokens;
    DecodeDtype dtype = DecodeDtype::kFloat32;
    bool shortlist = false;
  };
  std::vector<Mode> modes{{"greedy, batched, cached", 1, true, config.decoding.batch_tokens},
                          {"beam 5, batched, cached", 5, true, config.decoding.batch_tokens},
                          {"greedy, batch size 1, cached", 1, true, 1}};
  if (!cli.no_uncached) {
    modes.push_back({"greedy, batched, no cache", 1, false, config.decoding.batch_tokens});
    modes.push_back({"beam 5, batched, no cache", 5, false, config.decoding.batch_tokens});
  }
  if (cli.bf16_decoding) {
    modes.push_back({"greedy, batched, cached, bf16", 1, true, config.decoding.batch_tokens,
                     DecodeDtype::kBf16});
    modes.push_back({"beam 5, batched, cached, bf16", 5, true, config.decoding.batch_tokens,
                     DecodeDtype::kBf16});
  }
  if (cli.int8_decoding) {
    modes.push_back({"greedy, batched, cached, int8", 1, true, config.decoding.batch_tokens,
                     DecodeDtype::kInt8});
    modes.push_back({"beam 5, batched, cached, int8", 5, true, config.decoding.batch_tokens,
                     DecodeDtype::kInt8});
    modes.push_back({"greedy, batch size 1, cached, int8", 1, true, 1, DecodeDtype::kInt8});
  }
  if (!cli.shortlist.empty()) {
    const int64_t batch_tokens = config.decoding.batch_tokens;
    modes.push_back(
        {"beam 5, batched, cached, shortlist", 5, true, batch_tokens, DecodeDtype::kFloat32, true});
    if (cli.int8_decoding) {
      modes.push_back({"beam 5, batched, cached, int8, shortlist", 5, true, batch_tokens,
                       DecodeDtype::kInt8, true});
      modes.push_back({"greedy, batched, cached, int8, shortlist", 1, true, batch_tokens,
                       DecodeDtype::kInt8, true});
    }
  }
  const Int8Linears& int8 =
      cached.int8();  // packed by the first int8 mode's first batch, timed apart
  struct Packing {
    int64_t weights = 0;
    double seconds = 0;
    int64_t bytes = 0;
  } model_packing;  // the model's own weights, before any shortlist's rows
  bool shortlist_ran = false;
  auto note_model_packing = [&] {
    if (!shortlist_ran)
      model_packing = {int8.packed_weights(), int8.pack_seconds(), int8.int8_bytes()};
  };
  for (const auto& mode : modes) {
    note_model_packing();
    shortlist_ran = shortlist_ran || mode.shortlist;
    SearchOptions options = cached.search_options();
    options.dtype = mode.dtype;
    options.beam = mode.beam;
    options.nbest = 1;
    options.batch_tokens = mode.batch_tokens;
    options.shortlist = mode.shortlist ? cli.shortlist : "";
    Translator& translator = mode.cache ? cached : uncached;
    translator.prepare(options);  // loads the shortlist before the clock starts
    ChromeTrace trace(cli.trace_dir,
                      fmt::format("decode_beam{}_{}{}{}_batch{}.json", mode.beam,
                                  mode.cache ? "cached" : "uncached", dtype_suffix(mode.dtype),
                                  mode.shortlist ? "_shortlist" : "", mode.batch_tokens));
    const double pack_seconds = int8.pack_seconds();
    auto start = Clock::now();
    auto translations = translator.translate_batch(sources, options);
    // Packing the model's weights happens once per process and is left out; a shortlist's rows
    // are packed anew for every batch, which is part of its cost (its modes run after the
    // model's weights were packed).
    const double seconds =
        seconds_since(start) - (mode.shortlist ? 0.0 : int8.pack_seconds() - pack_seconds);
    trace.stop();
    int64_t tokens = 0;
    for (const auto& t : translations) {
      if (!t.nbest.empty()) tokens += static_cast<int64_t>(t.nbest[0].tokens.size()) + 1;
    }
    if (mode.beam == 1 && mode.cache && mode.batch_tokens > 1 &&
        mode.dtype == DecodeDtype::kFloat32) {
      for (const auto& t : translations)
        greedy_ids.push_back(t.nbest.empty() ? std::vector<int64_t>{} : t.nbest[0].tokens);
    }
    const double sentences_per_second = static_cast<double>(sources.size()) / seconds;
    results.push_back(
        {{"mode", mode.name},
         {"beam", mode.beam},
         {"cache", mode.cache},
         {"sentences", sources.size()},
         {"seconds", seconds},
         {"sentences_per_second", sentences_per_second},
         {"tokens_per_second", static_cast<double>(tokens) / seconds},
         {"ms_per_sentence", 1000.0 * seconds / static_cast<double>(sources.size())}});
    out << fmt::format(
        "decoding   {:<31} {:8.1f} sentences/s {:9.0f} tokens/s {:8.2f} ms/sentence\n", mode.name,
        sentences_per_second, static_cast<double>(tokens) / seconds,
        1000.0 * seconds / static_cast<double>(sources.size()));
  }
  note_model_packing();
  if (cli.latency) {
    for (auto& entry : benchmark_latency(cli, cached, sources, out)) results.push_back(entry);
  }
  if (model_packing.weights > 0) {
    out << fmt::format(
        "int8       {} weight matrices packed in {:.0f} ms: {:.1f} MB in int8 (the float32 "
        "model has {:.1f} MB of parameters); packing is left out of the times above\n",
        model_packing.weights, 1000 * model_packing.seconds, model_packing.bytes / 1e6,
        4.0 * static_cast<double>(count_parameters(*trained.model)) / 1e6);
    results.push_back({{"mode", "int8 packing"},
                       {"weights", model_packing.weights},
                       {"seconds", model_packing.seconds},
                       {"int8_bytes", model_packing.bytes}});
  }
  if (!cli.export_dir.empty()) {
    // The trained weights and tokenized test sources, for the Python peer's decoder.
    fs::create_directories(cli.export_dir);
    export_weights(*trained.model, cli.export_dir + "/weights.pt");
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& source : sources) {
      ids.push_back(source_ids(trained.tokenizers, {source, {}, {}, {}},
                               trained.config.decoding.target_lang,
                               static_cast<int64_t>(ids.size()) + 1));
    }
    write_json(cli.export_dir + "/test_src.json", ids);
    write_json(cli.export_dir + "/greedy_ids.json", greedy_ids);
    export_model_spec(config, trained.tokenizers.tgt->vocab_size(), cli.export_dir + "/model.json");
  }
  return results;
}

}  // namespace nmtzoo
