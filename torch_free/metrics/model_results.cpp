// SPDX-License-Identifier: MIT
#include "torch_free/metrics/model_results.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
}

// record[key], or an error naming the file and the missing key.
template <typename T>
T get(const json& record, const std::string& key, const std::string& where) {
  if (!record.is_object() || !record.contains(key)) {
    throw std::runtime_error(where + ": missing key '" + key + "'");
  }
  try {
    return record.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(where + ": key '" + key + "' has the wrong type");
  }
}

// Maps a run's wall-clock seconds to the seconds of its time budget (training.max_time) spent by
// then: each session after a start or resume counts its seconds at the ratio of the matmul
// ceiling it measured to training.reference_gflops (training_summary.json's budget_sessions), so
// runs made on machines of different speeds share the report's time axis.
class BudgetClock {
 public:
  BudgetClock(const json& summary, const std::string& where) {
    if (!summary.contains("budget_sessions")) return;  // no reference machine: budget = wall
    for (const auto& session : summary.at("budget_sessions")) {
      sessions_.emplace_back(get<double>(session, "started_at_wall_seconds", where),
                             get<double>(session, "scale", where));
    }
  }

  double budget_seconds(double wall_seconds) const {
    double budget = 0, at = 0, scale = 1;
    for (const auto& [start, session_scale] : sessions_) {
      if (wall_seconds <= start) break;
      budget += (start - at) * scale;
      at = start;
      scale = session_scale;
    }
    return budget + (wall_seconds - at) * scale;
  }

 private:
  std::vector<std::pair<double, double>> sessions_;  // wall-clock second it started at, scale
};
}  // namespace

ModelResults load_model_results(const std::string& out, const std::string& name,
                                const std::vector<std::string>& tests) {
  const std::string dir = out + "/" + name;
  ModelResults model;
  model.name = name;
  const std::string summary_path = dir + "/training_summary.json";
  const json summary = read_json(summary_path);
  model.arch = get<std::string>(summary, "arch", summary_path);
  model.parameters = get<int64_t>(summary, "parameters", summary_path);
  model.updates = get<int64_t>(summary, "updates", summary_path);
  const double wall_seconds = get<double>(summary, "wall_seconds", summary_path);
  const BudgetClock clock(summary, summary_path);
  const double budget_seconds = clock.budget_seconds(wall_seconds);
  if (summary.contains("budget_seconds") &&
      std::abs(budget_seconds - get<double>(summary, "budget_seconds", summary_path)) > 1.0) {
    throw std::runtime_error(fmt::format(
        "{}: budget_sessions add up to {:.1f} s of budget at wall_seconds, but budget_seconds "
        "says {:.1f}",
        summary_path, budget_seconds, summary.at("budget_seconds").get<double>()));
  }
  model.budget_minutes = budget_seconds / 60;
  model.wall_minutes = wall_seconds / 60;
  model.target_tokens_per_second = get<double>(summary, "target_tokens_per_second", summary_path);
  for (const auto& test : tests) {
    const std::string scores_path = fmt::format("{}/{}.scores.json", dir, test);
    for (const auto& score : read_json(scores_path)) {
      const auto metric = get<std::string>(score, "name", scores_path);
      model.scores[metric][test] = get<double>(score, "score", scores_path);
    }
    for (const char* metric : kReportMetrics) {
      if (!model.scores[metric].count(test)) {
        throw std::runtime_error(
            fmt::format("{}: has no {} score (experiments/compare.sh scores "
                        "BLEU, chrF2 and TER)",
                        scores_path, metric));
      }
    }
    const std::string speed_path = fmt::format("{}/{}.speed.json", dir, test);
    model.sentences_per_second[test] =
        get<double>(read_json(speed_path), "sentences_per_second", speed_path);
  }
  const std::string metrics_path = dir + "/metrics.jsonl";
  const auto lines = read_lines(metrics_path);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = fmt::format("{}:{}", metrics_path, i + 1);
    const auto record = json::parse(lines[i], nullptr, false);
    if (record.is_discarded()) throw std::runtime_error(where + ": not valid JSON");
    const auto type = get<std::string>(record, "type", where);
    if (type == "valid" && record.contains("bleu")) {
      model.valid_bleu.x.push_back(
          clock.budget_seconds(get<double>(record, "wall_seconds", where)) / 60);
      model.valid_bleu.y.push_back(get<double>(record, "bleu", where));
    } else if (type == "train") {
      model.train_loss.x.push_back(get<double>(record, "step", where));
      model.train_loss.y.push_back(get<double>(record, "loss", where));
    }
  }
  return model;
}

}  // namespace nmtzoo
