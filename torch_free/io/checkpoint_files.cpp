// SPDX-License-Identifier: MIT
#include "torch_free/io/checkpoint_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>

#include "torch_free/io/atomic_file.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {

namespace fs = std::filesystem;

std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  const std::regex pattern("checkpoint_([0-9]+)\\.pt");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, match, pattern))
      found.emplace_back(std::stoll(match[1]), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<int64_t> CheckpointScores::best(size_t count) const {
  std::vector<std::pair<double, int64_t>> ranked;
  for (const auto& [step, score] : by_step) ranked.emplace_back(score, step);
  std::stable_sort(ranked.begin(), ranked.end(), [this](const auto& a, const auto& b) {
    return higher_is_better ? a.first > b.first : a.first < b.first;
  });
  std::vector<int64_t> steps;
  for (size_t i = 0; i < std::min(count, ranked.size()); ++i) steps.push_back(ranked[i].second);
  return steps;
}

std::string checkpoint_scores_path(const std::string& dir) {
  return (fs::path(dir) / "scores.json").string();
}

CheckpointScores read_checkpoint_scores(const std::string& path) {
  CheckpointScores scores;
  std::ifstream in(path);
  if (!in) return scores;
  try {
    const nlohmann::json json = nlohmann::json::parse(in);
    scores.metric = json.at("metric").get<std::string>();
    scores.higher_is_better = json.at("higher_is_better").get<bool>();
    for (const auto& entry : json.at("checkpoints")) {
      scores.by_step[entry.at("step").get<int64_t>()] = entry.at("score").get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw IoError(fmt::format("'{}' is not a checkpoint scores file: {}", path, e.what()));
  }
  return scores;
}

void write_checkpoint_scores(const std::string& path, const CheckpointScores& scores) {
  nlohmann::json checkpoints = nlohmann::json::array();
  for (const auto& [step, score] : scores.by_step)
    checkpoints.push_back({{"step", step}, {"score", score}});
  const nlohmann::json json{{"metric", scores.metric},
                            {"higher_is_better", scores.higher_is_better},
                            {"checkpoints", checkpoints}};
  write_file_atomically(path, [&](std::ostream& out) { out << json.dump(1) << "\n"; });
}

}  // namespace nmtzoo
