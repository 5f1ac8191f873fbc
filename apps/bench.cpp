// nmtzoo-bench: training and decoding speed of a config's model on this machine, with the
// float32 matmul ceiling measured in the same run. A benchmark, never a test.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "apps/common.h"
#include "core/io/process_stats.h"
#include "core/config/loader.h"
#include "core/data/corpus.h"
#include "core/io/atomic_file.h"
#include "core/io/text_file.h"
#include "core/runtime/matmul_ceiling.h"
#include "core/runtime/trained_model.h"
#include "core/search/prefix_recomputing_model.h"
#include "core/search/shortlist.h"
#include "core/search/translator.h"
#include "core/runtime/runtime.h"
#include "core/train/engine.h"
#include "core/train/training_data.h"
#include "core/train/update_timing.h"
#include "kernels/int8_linear.h"
#include "kernels/kernels.h"
#include "kernels/onednn_matmul.h"
#include "models/encoder_decoder.h"
#include "models/registry.h"
#include "core/runtime/weights.h"

namespace {

using namespace nmtzoo;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void write_json(const std::string& path, const nlohmann::json& value) {
  write_file_atomically(path, [&](std::ostream& out) { out << value.dump(); });
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Options {
  std::string config;
  std::vector<std::string> overrides;
  std::string checkpoint;
  std::string test_split = "test_2016_flickr";
  int64_t warmup = 3;
  int64_t steps = 20;
  int64_t repeats = 3;
  int64_t threads = 0;
  int64_t sentences = 0;
  bool no_uncached = false;
  std::string json_path;
  std::string export_dir;
  std::string python_json;
  std::string trace_dir;
  bool bf16_decoding = false;
  bool int8_decoding = false;
  bool latency = false;
  std::string shortlist;
  std::string matmul = "onednn";
};

// A Chrome trace of everything LibTorch runs until the returned object is destroyed; none
// without --trace.
std::unique_ptr<torch::autograd::profiler::RecordProfile> start_trace(const Options& cli,
                                                                      const std::string& file) {
  if (cli.trace_dir.empty()) return nullptr;
  fs::create_directories(cli.trace_dir);
  return std::make_unique<torch::autograd::profiler::RecordProfile>(cli.trace_dir + "/" + file);
}

nlohmann::json bench_training(const Options& cli, MatmulCeiling& ceiling) {
  RunConfig config = load_config(cli.config, cli.overrides);
  check_run_config(config);
  if (config.tokenizer.prefix.empty()) config.tokenizer.prefix = config.run_dir() + "/spm";
  fs::path scratch = fs::temp_directory_path() / fmt::format("nmtzoo_bench_{}", ::getpid());
  config.training.output_dir = scratch.string();
  if (cli.threads > 0) config.training.threads = cli.threads;
  check_config(config);
  std::ostringstream log;
  configure_threads(config.training.threads);
  TrainingData data = prepare_training_data(config, log);
  TrainingEngine engine(config, data, resolve_device(config.training.device), nullptr, log);
  const int64_t parameters = count_parameters(engine.model());
  UpdateTiming timing;
  {
    auto trace = start_trace(cli, "train.json");
    timing = time_updates(engine, data, config.training, cli.warmup, cli.steps, cli.repeats);
  }
  // This machine's speed drifts (shared host): the ceiling is the best of before and after.
  ceiling.measure();
  const std::string arch = resolve_arch(config.model.arch);
  double flops = 0;
  for (const auto& shape : timing.shapes) {
    flops += training_flops(config.model, data.tokenizers.tgt->vocab_size(), shape);
  }
  const double gflops = flops / timing.seconds / 1e9;
  const double updates = static_cast<double>(timing.updates);
  // Products alone: how close the kernels come to the ceiling on these shapes, and what the rest
  // of a step (elementwise operators, the loss, the optimizer, autograd) costs.
  const double product_gflops = flops / timing.product_seconds / 1e9;
  nlohmann::json result{
      {"arch", config.model.arch},
      {"parameters", parameters},
      {"threads", torch::get_num_threads()},
      {"bf16", config.training.bf16},
      {"updates", timing.updates},
      {"repeats", cli.repeats},
      {"seconds", timing.seconds},
      {"tgt_tokens_per_second", static_cast<double>(timing.tgt_tokens) / timing.seconds},
      {"src_tgt_tokens_per_second",
       static_cast<double>(timing.src_tokens + timing.tgt_tokens) / timing.seconds},
      {"gflop_per_update", flops / static_cast<double>(timing.updates) / 1e9},
      {"gflops", gflops},
      {"mfu", gflops / ceiling.best()},
      {"mfu_of_blas", gflops / ceiling.blas},
      {"matmul_gflops", ceiling.best()},
      {"onednn_matmul_gflops", ceiling.onednn},
      {"blas_matmul_gflops", ceiling.blas},
      {"product_seconds_per_update", timing.product_seconds / updates},
      {"other_seconds_per_update", (timing.seconds - timing.product_seconds) / updates},
      {"product_gflops", product_gflops}};
  std::cout << fmt::format(
      "training   {} ({}, {:.2f}M parameters, {}{} threads): {} updates of ~{} tokens in "
      "{:.1f} s (fastest of {} passes)\n"
      "           {:.0f} target tokens/s, {:.0f} source+target tokens/s\n"
      "           {:.1f} GFLOP/update, {:.1f} GFLOP/s = {:.0f}% of the float32 matmul ceiling ({:.1f} "
      "GFLOP/s, best of before and after), {:.0f}% of LibTorch's BLAS ({:.1f})\n",
      config.model.arch, arch, static_cast<double>(parameters) / 1e6,
      config.training.bf16 ? "bf16 autocast, " : "", torch::get_num_threads(), timing.updates,
      config.training.max_tokens, timing.seconds, cli.repeats, result["tgt_tokens_per_second"].get<double>(),
      result["src_tgt_tokens_per_second"].get<double>(), result["gflop_per_update"].get<double>(),
      gflops, 100 * gflops / ceiling.best(), ceiling.best(), 100 * gflops / ceiling.blas, ceiling.blas);
  std::cout << fmt::format(
      "           per update: {:.0f} ms in matrix products ({:.1f} GFLOP/s there, {:.0f}% of the "
      "ceiling), {:.0f} ms in everything else\n",
      1000 * timing.product_seconds / updates, product_gflops, 100 * product_gflops / ceiling.best(),
      1000 * (timing.seconds - timing.product_seconds) / updates);
  if (!cli.export_dir.empty()) {
    // The batches just timed, for scripts/bench_python.py to train on the same data.
    fs::create_directories(cli.export_dir);
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& s : timing.shapes) {
      shapes.push_back({{"rows", s.rows}, {"src_len", s.src_len}, {"tgt_len", s.tgt_len},
                        {"src_tokens", s.src_tokens}, {"tgt_tokens", s.tgt_tokens}});
    }
    write_json(cli.export_dir + "/train_shapes.json", shapes);
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return result;
}

const char* dtype_suffix(DecodeDtype dtype) {
  switch (dtype) {
    case DecodeDtype::kFloat32: return "";
    case DecodeDtype::kBf16: return "_bf16";
    case DecodeDtype::kInt8: return "_int8";
  }
  return "";
}

// Sentences translated one at a time, as an interactive user sends them: greedy, each call timed
// from text to text (tokenization included), after 20 untimed warm-up sentences; per dtype.
nlohmann::json bench_latency(const Options& cli, TrainedModel& trained, const std::vector<std::string>& sources,
                             const std::shared_ptr<const Shortlist>& shortlist) {
  constexpr size_t kWarmup = 20;
  nlohmann::json results = nlohmann::json::array();
  std::vector<DecodeDtype> dtypes{DecodeDtype::kFloat32};
  if (cli.bf16_decoding) dtypes.push_back(DecodeDtype::kBf16);
  if (cli.int8_decoding) dtypes.push_back(DecodeDtype::kInt8);
  std::vector<std::pair<DecodeDtype, bool>> variants;  // dtype, with the shortlist
  for (DecodeDtype dtype : dtypes) variants.emplace_back(dtype, false);
  if (shortlist) {
    variants.emplace_back(DecodeDtype::kFloat32, true);
    if (cli.int8_decoding) variants.emplace_back(DecodeDtype::kInt8, true);
  }
  for (const auto& [dtype, shortlisted] : variants) {
    TranslatorOptions options;
    options.search = SearchOptions::from(trained.config.decoding);
    options.search.beam = 1;
    options.search.nbest = 1;
    options.dtype = dtype;
    if (shortlisted) {
      options.shortlist = shortlist;
      options.shortlist_top_k = trained.config.decoding.shortlist_top_k;
      options.shortlist_frequent = trained.config.decoding.shortlist_frequent;
    }
    Int8Linears int8;
    Translator translator(*trained.model, trained.tokenizers, options, torch::kCPU, &int8);
    for (size_t i = 0; i < std::min(kWarmup, sources.size()); ++i) translator.translate({sources[i]});
    std::vector<double> ms;
    for (const auto& source : sources) {
      const auto start = Clock::now();
      translator.translate({source});
      ms.push_back(1000.0 * seconds_since(start));
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    auto quantile = [&](double q) { return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))]; };
    double total = 0;
    for (double m : ms) total += m;
    const std::string suffix = std::string(dtype_suffix(dtype)) + (shortlisted ? ", shortlist" : "");
    const std::string name = "latency, greedy, one sentence per call" + suffix;
    results.push_back({{"mode", name}, {"sentences", ms.size()}, {"median_ms", quantile(0.5)},
                       {"p90_ms", quantile(0.9)}, {"mean_ms", total / static_cast<double>(ms.size())},
                       {"threads", torch::get_num_threads()}});
    std::cout << fmt::format("latency    {:<31} median {:6.2f} ms  p90 {:6.2f} ms  mean {:6.2f} ms ({} sentences, {} threads)\n",
                             "greedy, 1 sentence/call" + suffix, quantile(0.5),
                             quantile(0.9), total / static_cast<double>(ms.size()), ms.size(), torch::get_num_threads());
  }
  return results;
}

nlohmann::json bench_decoding(const Options& cli) {
  TrainedModel trained = load_trained_model(cli.checkpoint, torch::kCPU);
  const RunConfig& config = trained.config;
  ParallelText test = read_parallel(config.corpus_path(cli.test_split, config.data.src_lang),
                                    config.corpus_path(cli.test_split, config.data.tgt_lang));
  std::vector<std::string> sources = test.src;
  if (cli.sentences > 0 && static_cast<size_t>(cli.sentences) < sources.size()) sources.resize(cli.sentences);
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
    modes.push_back({"greedy, batched, cached, bf16", 1, true, config.decoding.batch_tokens, DecodeDtype::kBf16});
    modes.push_back({"beam 5, batched, cached, bf16", 5, true, config.decoding.batch_tokens, DecodeDtype::kBf16});
  }
  if (cli.int8_decoding) {
    modes.push_back({"greedy, batched, cached, int8", 1, true, config.decoding.batch_tokens, DecodeDtype::kInt8});
    modes.push_back({"beam 5, batched, cached, int8", 5, true, config.decoding.batch_tokens, DecodeDtype::kInt8});
    modes.push_back({"greedy, batch size 1, cached, int8", 1, true, 1, DecodeDtype::kInt8});
  }
  std::shared_ptr<const Shortlist> shortlist;
  if (!cli.shortlist.empty()) {
    shortlist = std::make_shared<const Shortlist>(Shortlist::load(cli.shortlist, trained.tokenizers));
    const int64_t batch_tokens = config.decoding.batch_tokens;
    modes.push_back({"beam 5, batched, cached, shortlist", 5, true, batch_tokens, DecodeDtype::kFloat32, true});
    if (cli.int8_decoding) {
      modes.push_back({"beam 5, batched, cached, int8, shortlist", 5, true, batch_tokens, DecodeDtype::kInt8, true});
      modes.push_back({"greedy, batched, cached, int8, shortlist", 1, true, batch_tokens, DecodeDtype::kInt8, true});
    }
  }
  Int8Linears int8;  // packed by the first int8 mode's first batch, timed apart
  auto uncached = std::make_shared<PrefixRecomputingModel>(trained.model);
  struct Packing {
    int64_t weights = 0;
    double seconds = 0;
    int64_t bytes = 0;
  } model_packing;  // the model's own weights, before any shortlist's rows
  bool shortlist_ran = false;
  auto note_model_packing = [&] {
    if (!shortlist_ran) model_packing = {int8.packed_weights(), int8.pack_seconds(), int8.int8_bytes()};
  };
  for (const auto& mode : modes) {
    note_model_packing();
    shortlist_ran = shortlist_ran || mode.shortlist;
    TranslatorOptions options;
    options.dtype = mode.dtype;
    options.search = SearchOptions::from(config.decoding);
    options.search.beam = mode.beam;
    options.search.nbest = 1;
    options.batch_tokens = mode.batch_tokens;
    if (mode.shortlist) {
      options.shortlist = shortlist;
      options.shortlist_top_k = config.decoding.shortlist_top_k;
      options.shortlist_frequent = config.decoding.shortlist_frequent;
    }
    Translator translator(mode.cache ? *trained.model : *uncached, trained.tokenizers, options,
                          torch::kCPU, &int8);
    auto trace = start_trace(cli, fmt::format("decode_beam{}_{}{}{}_batch{}.json", mode.beam,
                                              mode.cache ? "cached" : "uncached", dtype_suffix(mode.dtype),
                                              mode.shortlist ? "_shortlist" : "", mode.batch_tokens));
    const double pack_seconds = int8.pack_seconds();
    auto start = Clock::now();
    auto translations = translator.translate(sources);
    // Packing the model's weights happens once per process and is left out; a shortlist's rows
    // are packed anew for every batch, which is part of its cost (its modes run after the
    // model's weights were packed).
    const double seconds = seconds_since(start) - (mode.shortlist ? 0.0 : int8.pack_seconds() - pack_seconds);
    trace.reset();
    int64_t tokens = 0;
    for (const auto& t : translations) {
      if (!t.nbest.empty()) tokens += static_cast<int64_t>(t.nbest[0].tokens.size()) + 1;
    }
    if (mode.beam == 1 && mode.cache && mode.batch_tokens > 1 && mode.dtype == DecodeDtype::kFloat32) {
      for (const auto& t : translations) greedy_ids.push_back(t.nbest.empty() ? std::vector<int64_t>{} : t.nbest[0].tokens);
    }
    const double sentences_per_second = static_cast<double>(sources.size()) / seconds;
    results.push_back({{"mode", mode.name}, {"beam", mode.beam}, {"cache", mode.cache},
                       {"sentences", sources.size()}, {"seconds", seconds},
                       {"sentences_per_second", sentences_per_second},
                       {"tokens_per_second", static_cast<double>(tokens) / seconds},
                       {"ms_per_sentence", 1000.0 * seconds / static_cast<double>(sources.size())}});
    std::cout << fmt::format("decoding   {:<31} {:8.1f} sentences/s {:9.0f} tokens/s {:8.2f} ms/sentence\n",
                             mode.name, sentences_per_second, static_cast<double>(tokens) / seconds,
                             1000.0 * seconds / static_cast<double>(sources.size()));
  }
  note_model_packing();
  if (cli.latency) {
    for (auto& entry : bench_latency(cli, trained, sources, shortlist)) results.push_back(entry);
  }
  if (model_packing.weights > 0) {
    std::cout << fmt::format("int8       {} weight matrices packed in {:.0f} ms: {:.1f} MB in int8 (the float32 "
                             "model has {:.1f} MB of parameters); packing is left out of the times above\n",
                             model_packing.weights, 1000 * model_packing.seconds, model_packing.bytes / 1e6,
                             4.0 * static_cast<double>(count_parameters(*trained.model)) / 1e6);
    results.push_back({{"mode", "int8 packing"}, {"weights", model_packing.weights},
                       {"seconds", model_packing.seconds}, {"int8_bytes", model_packing.bytes}});
  }
  if (!cli.export_dir.empty()) {
    // The trained weights and tokenized test sources, for the Python peer's decoder.
    fs::create_directories(cli.export_dir);
    export_weights(*trained.model, cli.export_dir + "/weights.pt");
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& source : sources) ids.push_back(trained.tokenizers.src->encode(source));
    write_json(cli.export_dir + "/test_src.json", ids);
    write_json(cli.export_dir + "/greedy_ids.json", greedy_ids);
    write_json(cli.export_dir + "/model.json",
               nlohmann::json{{"arch", resolve_arch(config.model.arch)},
                          {"d_model", config.model.d_model}, {"heads", config.model.heads},
                          {"ffn_dim", config.model.ffn_dim},
                          {"encoder_layers", config.model.encoder_layers},
                          {"decoder_layers", config.model.decoder_layers},
                          {"vocab", trained.tokenizers.tgt->vocab_size()},
                          {"max_len_a", config.decoding.max_len_a},
                          {"max_len_b", config.decoding.max_len_b},
                          {"max_tokens", config.training.max_tokens}});
  }
  return results;
}

int run(const Options& cli) {
  register_builtin_models();  // a decoding-only run loads checkpoints too
  configure_threads(cli.threads);
  set_onednn_matmul_enabled(cli.matmul == "onednn");
  MatmulCeiling ceiling;
  ceiling.measure();
  const bool through_onednn = cli.matmul == "onednn" && fast_kernels_enabled();
  std::cout << fmt::format("machine    float32 matmul ceiling (2048^3, best of 6, {} threads): "
                           "oneDNN {:.1f} GFLOP/s, LibTorch's BLAS {:.1f} GFLOP/s; products through {}\n",
                           torch::get_num_threads(), ceiling.onednn, ceiling.blas,
                           through_onednn ? "oneDNN"
                           : fast_kernels_enabled() ? "LibTorch's BLAS"
                                                    : "LibTorch's BLAS (NMTZOO_KERNELS=off)");
  nlohmann::json report{{"matmul_gflops", ceiling.best()}, {"onednn_matmul_gflops", ceiling.onednn},
                        {"blas_matmul_gflops", ceiling.blas},
                        {"matmul", through_onednn ? "onednn" : "blas"},
                        {"threads", torch::get_num_threads()}};
  if (!cli.config.empty()) report["training"] = bench_training(cli, ceiling);
  if (!cli.checkpoint.empty()) report["decoding"] = bench_decoding(cli);
  report["peak_rss_mb"] = peak_resident_set_mb();
  std::cout << fmt::format("memory     peak resident set: {:.0f} MB\n", peak_resident_set_mb());
  if (!cli.python_json.empty()) {
    auto python = nlohmann::json::parse(read_lines(cli.python_json).front());
    report["python"] = python;
    if (report.contains("training") && python.contains("train_tgt_tokens_per_second")) {
      double ours = report["training"]["tgt_tokens_per_second"];
      double theirs = python["train_tgt_tokens_per_second"];
      std::cout << fmt::format("vs Python  training: {:.0f} vs {:.0f} target tokens/s = {:.2f}x\n",
                               ours, theirs, ours / theirs);
    }
    if (report.contains("decoding") && python.contains("naive_greedy_sentences_per_second")) {
      double naive = python["naive_greedy_sentences_per_second"];
      for (const auto& mode : report["decoding"]) {
        std::cout << fmt::format("vs Python  {:<30} {:.1f}x the naive one-at-a-time greedy decoder "
                                 "({:.1f} sentences/s)\n",
                                 mode["mode"].get<std::string>(),
                                 mode["sentences_per_second"].get<double>() / naive, naive);
      }
    }
  }
  if (!cli.json_path.empty()) {
    write_file_atomically(cli.json_path, [&](std::ostream& out) { out << report.dump(2) << "\n"; });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark training (a config) and decoding (a checkpoint) on this machine."};
  Options cli;
  app.add_option("-c,--config", cli.config, "run config whose model and batches to time");
  app.add_option("--set", cli.overrides, "override a config key")->type_name("KEY=VALUE");
  app.add_option("--checkpoint", cli.checkpoint, "trained checkpoint for the decoding figures");
  app.add_option("--test", cli.test_split, "split decoded")->capture_default_str();
  app.add_option("--warmup", cli.warmup, "untimed updates first")->capture_default_str();
  app.add_option("--steps", cli.steps, "timed updates")->capture_default_str();
  app.add_option("--repeats", cli.repeats, "timed passes over the same updates; the fastest counts")
      ->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads; 0 = all cores")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--sentences", cli.sentences, "decode only the first N test sentences");
  app.add_flag("--no-uncached", cli.no_uncached, "skip the slow no-cache decoding modes");
  app.add_option("--shortlist", cli.shortlist,
                 "also time beam 5 (and with --int8-decoding: beam 5 and greedy in int8) over this lexical "
                 "shortlist, with the checkpoint's decoding.shortlist_top_k and shortlist_frequent");
  app.add_flag("--bf16-decoding", cli.bf16_decoding, "also time greedy and beam 5 with bf16 autocast");
  app.add_flag("--latency", cli.latency,
               "also time sentences translated one at a time (greedy, 20 warm-up sentences; median and p90), "
               "in float32 and each dtype asked for");
  app.add_flag("--int8-decoding", cli.int8_decoding, "also time greedy, beam 5 and batch size 1 with int8 linear layers");
  app.add_option("--matmul", cli.matmul,
                 "where float32 products run: onednn (nmtzoo's default) or blas (LibTorch's own kernels)")
      ->check(CLI::IsMember({"onednn", "blas"}))
      ->capture_default_str();
  app.add_option("--json", cli.json_path, "also write the figures as JSON");
  app.add_option("--export-for-python", cli.export_dir,
                 "write batch shapes, weights and test ids for scripts/bench_python.py");
  app.add_option("--python-json", cli.python_json, "scripts/bench_python.py's output, for ratios");
  app.add_option("--trace", cli.trace_dir,
                 "write Chrome traces (LibTorch profiler) of the timed updates and of each decoding mode "
                 "into this folder; "
                 "the traced figures include the profiler's overhead");
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(cli); });
}
