// SPDX-License-Identifier: MIT
// One finished model's results as nmtzoo-report reads them: only from the files
// experiments/compare.sh keeps in the report folder (<out>/<model>/training_summary.json,
// metrics.jsonl, <test>.scores.json, <test>.speed.json), never from checkpoints, so a report can be
// rebuilt and a model added without the other models' run folders.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nmtzoo {

// The scores the report compares, as nmtzoo-evaluate names them.
inline constexpr const char* kReportMetrics[] = {"BLEU", "chrF2", "TER"};

struct Curve {
  std::vector<double> x;
  std::vector<double> y;
};

struct ModelResults {
  std::string name;
  std::string arch;
  int64_t parameters = 0;
  int64_t updates = 0;
  double budget_minutes = 0;  // of training.max_time, i.e. on the reference machine
  double wall_minutes = 0;
  double target_tokens_per_second = 0;
  std::map<std::string, std::map<std::string, double>> scores;  // by metric, then test set
  std::map<std::string, double> sentences_per_second;
  Curve valid_bleu;  // validation BLEU by minute of the time budget
  Curve train_loss;  // training loss by update step
};

// The results in <out>/<name>/ for the test sets `tests`; a missing file, key or score is a
// std::runtime_error naming the file.
ModelResults load_model_results(const std::string& out, const std::string& name,
                                const std::vector<std::string>& tests);

}  // namespace nmtzoo
