// SPDX-License-Identifier: MIT
#include "libtorch/train/training_benchmark.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/chrome_trace.h"
#include "libtorch/runtime/matmul_ceiling.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/runtime/weights.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/training_data.h"
#include "libtorch/train/update_timing.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {

namespace fs = std::filesystem;

nlohmann::json benchmark_training(const TrainingBenchmarkOptions& cli, MatmulCeiling& ceiling,
                                  std::ostream& out) {
  RunConfig config = load_config(cli.config, cli.overrides);
  check_run_config(config);
  if (config.tokenizer.prefix.empty()) config.tokenizer.prefix = config.run_dir() + "/spm";
  fs::path scratch = fs::temp_directory_path() / fmt::format("nmtzoo_bench_{}", ::getpid());
  config.training.output_dir = scratch.string();
  if (cli.threads > 0) config.training.threads = cli.threads;
  check_config(config);
  std::ostringstream log;
  configure_threads(config.training.threads, "training.threads");
  TrainingData data = prepare_training_data(config, log);
  TrainingEngine engine(config, data, resolve_device(config.training.device), nullptr, log);
  const int64_t parameters = count_parameters(engine.model());
  UpdateTiming timing;
  {
    ChromeTrace trace(cli.trace_dir, "train.json");
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
  out << fmt::format(
      "training   {} ({}, {:.2f}M parameters, {}{} threads): {} updates of ~{} tokens in "
      "{:.1f} s (fastest of {} passes)\n"
      "           {:.0f} target tokens/s, {:.0f} source+target tokens/s\n"
      "           {:.1f} GFLOP/update, {:.1f} GFLOP/s = {:.0f}% of the float32 matmul ceiling "
      "({:.1f} "
      "GFLOP/s, best of before and after), {:.0f}% of LibTorch's BLAS ({:.1f})\n",
      config.model.arch, arch, static_cast<double>(parameters) / 1e6,
      config.training.bf16 ? "bf16 autocast, " : "", torch::get_num_threads(), timing.updates,
      config.training.max_tokens, timing.seconds, cli.repeats,
      result["tgt_tokens_per_second"].get<double>(),
      result["src_tgt_tokens_per_second"].get<double>(), result["gflop_per_update"].get<double>(),
      gflops, 100 * gflops / ceiling.best(), ceiling.best(), 100 * gflops / ceiling.blas,
      ceiling.blas);
  out << fmt::format(
      "           per update: {:.0f} ms in matrix products ({:.1f} GFLOP/s there, {:.0f}% of the "
      "ceiling), {:.0f} ms in everything else\n",
      1000 * timing.product_seconds / updates, product_gflops,
      100 * product_gflops / ceiling.best(),
      1000 * (timing.seconds - timing.product_seconds) / updates);
  if (!cli.export_dir.empty()) {
    // The batches just timed, for experiments/measure/python_peer.py to train on the same data.
    fs::create_directories(cli.export_dir);
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& s : timing.shapes) {
      shapes.push_back({{"rows", s.rows},
                        {"src_len", s.src_len},
                        {"tgt_len", s.tgt_len},
                        {"src_tokens", s.src_tokens},
                        {"tgt_tokens", s.tgt_tokens}});
    }
    write_file_atomically(cli.export_dir + "/train_shapes.json",
                          [&](std::ostream& stream) { stream << shapes.dump(); });
    export_model_spec(config, data.tokenizers.tgt->vocab_size(), cli.export_dir + "/model.json");
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return result;
}

}  // namespace nmtzoo
