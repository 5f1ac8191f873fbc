// nmtzoo-average: averages the weights of several checkpoints (Vaswani et al. average the last
// 5 or 20), writing a checkpoint that translate and evaluate use like any other.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <regex>

#include "apps/common.h"
#include "core/runtime/checkpoint.h"
#include "core/runtime/runtime.h"
#include "core/runtime/trained_model.h"
#include "models/encoder_decoder.h"
#include "models/registry.h"

namespace {

using namespace nmtzoo;
namespace fs = std::filesystem;

// The newest `count` numbered checkpoints of a run's checkpoint folder, oldest first.
std::vector<std::string> last_checkpoints(const std::string& dir, size_t count) {
  std::vector<std::pair<int64_t, std::string>> found;
  const std::regex pattern("checkpoint_([0-9]+)\\.pt");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern)) found.emplace_back(std::stoll(match[1]), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  if (found.size() < count) {
    throw std::runtime_error(fmt::format("asked for the last {} checkpoints, but '{}' has {}", count,
                                         dir, found.size()));
  }
  std::vector<std::string> paths;
  for (size_t i = found.size() - count; i < found.size(); ++i) paths.push_back(found[i].second);
  return paths;
}

int run(std::vector<std::string> inputs, const std::string& dir, size_t last,
        const std::string& output) {
  if (!dir.empty()) inputs = last_checkpoints(dir, last);
  if (inputs.empty()) throw std::runtime_error("no checkpoints to average");
  TrainedModel average = load_trained_model(inputs.back(), torch::kCPU);
  CheckpointInfo info = read_checkpoint_info(inputs.back());
  torch::NoGradGuard no_grad;
  auto sums = average.model->named_parameters();
  for (auto& item : sums) item.value().zero_();
  for (const auto& path : inputs) {
    TrainedModel model = load_trained_model(path, torch::kCPU);
    if (model.config.model.arch != average.config.model.arch) {
      throw std::runtime_error("'" + path + "' holds a different model than '" + inputs.back() + "'");
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
  app.add_option("--dir", dir, "a run's checkpoints folder; averages its newest --last ones");
  app.add_option("--last", last, "how many of the newest checkpoints in --dir")->capture_default_str();
  app.add_option("-o,--output", output, "the averaged checkpoint")->required();
  CLI11_PARSE(app, argc, argv);
  nmtzoo::register_builtin_models();
  return nmtzoo::run_app([&] { return run(inputs, dir, last, output); });
}
