// SPDX-License-Identifier: MIT
// nmtzoo-average: averages the weights of several checkpoints (Vaswani et al. average the last
// 5 or 20), writing a checkpoint that translate and evaluate use like any other.
#include <fmt/format.h>
#include <torch/torch.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <vector>

#include "apps/common.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/registry.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/io/checkpoint_files.h"

namespace {

using namespace nmtzoo;
namespace fs = std::filesystem;

// The newest `count` numbered checkpoints of a run's checkpoint folder, oldest first.
std::vector<std::string> last_checkpoints(const std::string& dir, size_t count) {
  const auto found = numbered_checkpoints(dir);
  if (found.size() < count) {
    throw std::runtime_error(fmt::format("asked for the last {} checkpoints, but '{}' has {}",
                                         count, dir, found.size()));
  }
  std::vector<std::string> paths;
  for (size_t i = found.size() - count; i < found.size(); ++i) paths.push_back(found[i].second);
  return paths;
}

// The `count` checkpoints of a run's checkpoint folder with the best validation scores the
// trainer recorded (training.keep_best keeps them), oldest first.
std::vector<std::string> best_checkpoints(const std::string& dir, size_t count) {
  const std::string scores_path = checkpoint_scores_path(dir);
  const CheckpointScores scores = read_checkpoint_scores(scores_path);
  std::vector<int64_t> steps = scores.best(count);
  if (steps.size() < count) {
    throw std::runtime_error(
        fmt::format("asked for the {} best checkpoints, but '{}' scores {} "
                    "(train with training.keep_best >= {})",
                    count, scores_path, steps.size(), count));
  }
  std::sort(steps.begin(), steps.end());
  std::vector<std::string> paths;
  for (int64_t step : steps) {
    const fs::path path = fs::path(dir) / fmt::format("checkpoint_{}.pt", step);
    if (!fs::exists(path)) {
      throw std::runtime_error(
          fmt::format("'{}' scores {}, which is missing", scores_path, path.string()));
    }
    paths.push_back(path.string());
  }
  std::cerr << fmt::format("the {} best checkpoints by validation {}: steps {}\n", count,
                           scores.metric, fmt::join(steps, ", "));
  return paths;
}

int run(std::vector<std::string> inputs, const std::string& dir, size_t last, size_t best,
        const std::string& output, bool allow_unrelated) {
  if (!dir.empty()) inputs = best > 0 ? best_checkpoints(dir, best) : last_checkpoints(dir, last);
  if (inputs.empty()) throw std::runtime_error("no checkpoints to average");
  std::vector<NamedPath> named;
  for (const auto& path : inputs) named.push_back({dir.empty() ? "input" : "--dir's", path});
  check_output_is_not_an_input({"-o", output}, named);
  TrainedModel average = load_trained_model(inputs.back(), torch::kCPU);
  CheckpointInfo info = read_checkpoint_info(inputs.back());
  torch::NoGradGuard no_grad;
  auto sums = average.model->named_parameters();
  for (auto& item : sums) item.value().zero_();
  for (const auto& path : inputs) {
    TrainedModel model = load_trained_model(path, torch::kCPU);
    if (const std::string problem = unrelated_models_problem(average, model);
        !problem.empty() && !allow_unrelated) {
      throw std::runtime_error(fmt::format(
          "'{}' and '{}' {}: their average would mix weights that mean different things "
          "(--allow-unrelated averages them anyway)",
          inputs.back(), path, problem));
    }
    auto parameters = model.model->named_parameters();
    for (auto& item : sums) {
      const at::Tensor* other = parameters.find(item.key());
      if (other == nullptr || other->sizes() != item.value().sizes()) {
        throw std::runtime_error("'" + path + "' does not match the others at " + item.key());
      }
      item.value().add_(*other);
    }
  }
  for (auto& item : sums) item.value().div_(static_cast<double>(inputs.size()));
  save_checkpoint(output, average.config, *average.model, nullptr, info.progress,
                  average.tokenizers);
  std::cerr << fmt::format("averaged {} checkpoints ({} ... {}) into {}\n", inputs.size(),
                           inputs.front(), inputs.back(), output);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Average the weights of checkpoints of one run into a new checkpoint."};
  std::vector<std::string> inputs;
  std::string dir;
  size_t last = 5;
  std::string output;
  app.add_option("checkpoints", inputs, "checkpoints to average");
  size_t best = 0;
  auto* dir_option = app.add_option(
      "--dir", dir,
      "a run's checkpoints folder; averages its newest --last ones, or its --best ones");
  auto* last_option = app.add_option("--last", last, "how many of the newest checkpoints in --dir")
                          ->capture_default_str()
                          ->needs(dir_option);
  app.add_option("--best", best,
                 "average instead the N checkpoints in --dir with the best validation scores "
                 "(scores.json; kept by training.keep_best)")
      ->needs(dir_option)
      ->excludes(last_option);
  app.add_option("-o,--output", output, "the averaged checkpoint")->required();
  bool allow_unrelated = false;
  app.add_flag("--allow-unrelated", allow_unrelated,
               "average checkpoints of other languages, models or vocabularies too (refused "
               "otherwise)");
  CLI11_PARSE(app, argc, argv);
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(inputs, dir, last, best, output, allow_unrelated); });
}
