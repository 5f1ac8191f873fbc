// SPDX-License-Identifier: MIT
// nmtzoo-bench: training and decoding speed of a config's model on this machine, with the
// float32 matmul ceiling measured in the same run. A benchmark, never a test.
#include <fmt/format.h>
#include <torch/torch.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

#include "apps/common.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/onednn_matmul.h"
#include "libtorch/runtime/matmul_ceiling.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/decoding_benchmark.h"
#include "libtorch/train/training_benchmark.h"
#include "torch_free/archs/registry.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/process_stats.h"
#include "torch_free/io/text_file.h"

namespace {

using namespace nmtzoo;

struct Options {
  TrainingBenchmarkOptions training;
  DecodingBenchmarkOptions decoding;
  int64_t threads = 0;
  std::string json_path;
  std::string export_dir;
  std::string python_json;
  std::string trace_dir;
  std::string matmul = "onednn";
};

int run(Options cli) {
  cli.training.threads = cli.threads;
  cli.training.export_dir = cli.decoding.export_dir = cli.export_dir;
  cli.training.trace_dir = cli.decoding.trace_dir = cli.trace_dir;
  register_builtin_models();  // a decoding-only run loads checkpoints too
  configure_threads(cli.threads);
  set_onednn_matmul_enabled(cli.matmul == "onednn");
  MatmulCeiling ceiling;
  ceiling.measure();
  const bool through_onednn = cli.matmul == "onednn" && onednn_products_selected();
  std::cout << fmt::format(
      "machine    float32 matmul ceiling (2048^3, best of 6, {} threads): "
      "oneDNN {:.1f} GFLOP/s, LibTorch's BLAS {:.1f} GFLOP/s; products through {}{}\n",
      torch::get_num_threads(), ceiling.onednn, ceiling.blas,
      through_onednn ? "oneDNN" : "LibTorch's BLAS",
      kernel_selection() == KernelSelection::all ? ""
      : kernel_selection() == KernelSelection::products
          ? ", fused kernels off (NMTZOO_KERNELS=products)"
          : " (NMTZOO_KERNELS=off)");
  nlohmann::json report{{"matmul_gflops", ceiling.best()},
                        {"onednn_matmul_gflops", ceiling.onednn},
                        {"blas_matmul_gflops", ceiling.blas},
                        {"matmul", through_onednn ? "onednn" : "blas"},
                        {"threads", torch::get_num_threads()}};
  if (!cli.training.config.empty())
    report["training"] = benchmark_training(cli.training, ceiling, std::cout);
  if (!cli.decoding.checkpoint.empty())
    report["decoding"] = benchmark_decoding(cli.decoding, std::cout);
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
        std::cout << fmt::format(
            "vs Python  {:<30} {:.1f}x the naive one-at-a-time greedy decoder "
            "({:.1f} sentences/s)\n",
            mode["mode"].get<std::string>(), mode["sentences_per_second"].get<double>() / naive,
            naive);
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
  app.add_option("-c,--config", cli.training.config, "run config whose model and batches to time");
  app.add_option("--set", cli.training.overrides, "override a config key")->type_name("KEY=VALUE");
  app.add_option("--checkpoint", cli.decoding.checkpoint,
                 "trained checkpoint for the decoding figures");
  app.add_option("--test", cli.decoding.test_split, "split decoded")->capture_default_str();
  app.add_option("--warmup", cli.training.warmup, "untimed updates first")->capture_default_str();
  app.add_option("--steps", cli.training.steps, "timed updates")->capture_default_str();
  app.add_option("--repeats", cli.training.repeats,
                 "timed passes over the same updates; the fastest counts")
      ->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads; 0 = all cores")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--sentences", cli.decoding.sentences, "decode only the first N test sentences");
  app.add_flag("--no-uncached", cli.decoding.no_uncached, "skip the slow no-cache decoding modes");
  app.add_option(
      "--shortlist", cli.decoding.shortlist,
      "also time beam 5 (and with --int8-decoding: beam 5 and greedy in int8) over this lexical "
      "shortlist, with the checkpoint's decoding.shortlist_top_k and shortlist_frequent");
  app.add_flag("--bf16-decoding", cli.decoding.bf16_decoding,
               "also time greedy and beam 5 with bf16 autocast");
  app.add_flag("--latency", cli.decoding.latency,
               "also time sentences translated one at a time (greedy, 20 warm-up sentences; median "
               "and p90), "
               "in float32 and each dtype asked for");
  app.add_flag("--int8-decoding", cli.decoding.int8_decoding,
               "also time greedy, beam 5 and batch size 1 with int8 linear layers");
  app.add_option(
         "--matmul", cli.matmul,
         "where float32 products run: onednn (nmtzoo's default) or blas (LibTorch's own kernels)")
      ->check(CLI::IsMember({"onednn", "blas"}))
      ->capture_default_str();
  app.add_option("--json", cli.json_path, "also write the figures as JSON");
  app.add_option("--export-for-python", cli.export_dir,
                 "write batch shapes, weights and test ids for experiments/measure/python_peer.py");
  app.add_option("--python-json", cli.python_json,
                 "experiments/measure/python_peer.py's output, for ratios");
  app.add_option(
      "--trace", cli.trace_dir,
      "write Chrome traces (LibTorch profiler) of the timed updates and of each decoding mode "
      "into this folder; "
      "the traced figures include the profiler's overhead");
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(cli); });
}
