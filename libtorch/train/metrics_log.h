// SPDX-License-Identifier: MIT
// The machine-readable record of a run (<run dir>/metrics.jsonl, one JSON object a line) and the
// learning curves drawn from it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nmtzoo {

class MetricsLog {
 public:
  explicit MetricsLog(std::string path);
  // Appends one record; flushed at once so a crash loses nothing already logged.
  void append(const nlohmann::json& record);
  // Drops records of steps after `step` (resuming from a checkpoint written at `step`).
  void truncate_after(int64_t step);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes curve_train_loss.svg (train and validation loss against step) and curve_valid_bleu.svg
// (validation BLEU against wall time) into `dir` from the records of `metrics_path`.
void render_learning_curves(const std::string& metrics_path, const std::string& dir,
                            const std::string& run_name);

}  // namespace nmtzoo
