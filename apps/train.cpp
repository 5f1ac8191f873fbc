// SPDX-License-Identifier: MIT
// nmtzoo-train: trains a model as a YAML config describes.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

#include "apps/common.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/train/distributed.h"
#include "libtorch/train/trainer.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/process_stats.h"

namespace {

using namespace nmtzoo;

// Each start, resume and validation of a run with training.reference_gflops: the ceiling it
// measured and the scale the seconds until the next one counted with.
nlohmann::json budget_sessions(const TrainingProgress& progress) {
  nlohmann::json sessions = nlohmann::json::array();
  for (const BudgetSession& s : progress.budget_sessions) {
    sessions.push_back({{"started_at_wall_seconds", s.started_at},
                        {"measured_gflops", s.measured_gflops},
                        {"scale", s.scale}});
  }
  return sessions;
}

int run(const std::string& path, const std::vector<std::string>& overrides, bool resume,
        double timeout_seconds) {
  install_stop_signal_handlers();  // before any thread starts
  register_builtin_models();
  RunConfig config = load_config(path, overrides);
  check_run_config(config);
  auto communicator = Communicator::from_environment(
      std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
  Trainer trainer(config, resume, std::cerr, communicator);
  TrainResult result = trainer.train();
  const auto& p = result.progress;
  std::cerr << fmt::format(
      "{} after {} updates, {} epochs and {:.0f} s ({:.0f} target tokens/s while training); best "
      "{} {:.2f} at step {}; checkpoints in {}; peak RSS {:.0f} MB{}\n",
      result.stop_reason, p.step, p.epoch, p.wall_seconds,
      static_cast<double>(p.tokens_seen) / std::max(1e-9, p.train_seconds),
      selection_metric_name(config.training.best_metric), p.best_score, p.best_step,
      trainer.checkpoint_dir(), peak_resident_set_mb(),
      communicator ? fmt::format(" (rank {})", communicator->rank()) : "");
  if (!result.interrupted) {
    // Marks the run finished (experiments/compare.sh reuses finished runs; nmtzoo-report reads it).
    const nlohmann::json summary = {
        {"arch", config.model.arch},
        {"parameters", count_parameters(trainer.model())},
        {"stop_reason", result.stop_reason},
        {"updates", p.step},
        {"epochs", p.epoch},
        {"wall_seconds", p.wall_seconds},
        {"budget_seconds", p.budget_seconds},
        {"reference_gflops", config.training.reference_gflops},
        {"budget_sessions", budget_sessions(p)},
        {"train_seconds", p.train_seconds},
        {"target_tokens", p.tokens_seen},
        {"target_tokens_per_second",
         static_cast<double>(p.tokens_seen) / std::max(1e-9, p.train_seconds)},
        {"best_metric", selection_metric_name(config.training.best_metric)},
        {"best_score", p.best_score},
        {"best_step", p.best_step},
        {"first_update_seconds", result.first_update_seconds},
        {"setup_rss_mb", result.setup_rss_mb},
        {"peak_rss_mb", peak_resident_set_mb()}};
    write_file_atomically(config.run_dir() + "/training_summary.json",
                          [&](std::ostream& out) { out << summary.dump(2) << "\n"; });
  }
  if (result.interrupted) {
    std::string sets;
    for (const auto& o : overrides) sets += " --set " + o;
    std::cerr << fmt::format(
        "interrupted at step {}; continue with: nmtzoo-train --config {}{} "
        "--resume\n",
        p.step, path, sets);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Train an nmtzoo model. Trains the tokenizer first when its model files are "
      "missing. Multi-process: set RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (see "
      "scripts/launch.sh)."};
  std::string path;
  std::vector<std::string> overrides;
  bool resume = false;
  double timeout = 300;
  app.add_option("-c,--config", path, "YAML run config")->required();
  app.add_option("--set", overrides, "override a config key, e.g. --set training.lr=0.0005")
      ->type_name("KEY=VALUE");
  app.add_flag("--resume", resume, "continue from <run dir>/checkpoints/checkpoint_last.pt");
  app.add_option("--dist-timeout", timeout,
                 "seconds to wait for other ranks before failing (multi-process only)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(path, overrides, resume, timeout); });
}
