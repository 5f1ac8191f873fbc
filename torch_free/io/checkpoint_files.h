// SPDX-License-Identifier: MIT
// A run's numbered checkpoints (checkpoint_<step>.pt) and the validation scores the trainer
// recorded for them (scores.json beside them), so which checkpoints are a run's best is known
// without loading any of them: the trainer keeps training.keep_best of them, nmtzoo-average
// --best averages them (JoeyNMT's keep_best_ckpts, fairseq's --keep-best-checkpoints).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

// The numbered checkpoints in `dir` as (step, path), oldest first.
std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir);

struct CheckpointScores {
  std::string metric;            // training.best_metric's name, e.g. "bleu"
  bool higher_is_better = true;  // false for a loss
  std::map<int64_t, double> by_step;

  // The steps of the `count` best scores (fewer when fewer are known), best first; equal scores
  // rank the earlier step first, as checkpoint_best.pt does.
  std::vector<int64_t> best(size_t count) const;
};

// The scores file of a checkpoints folder.
std::string checkpoint_scores_path(const std::string& dir);
// Empty scores when the file does not exist; a malformed file is an IoError naming it.
CheckpointScores read_checkpoint_scores(const std::string& path);
void write_checkpoint_scores(const std::string& path, const CheckpointScores& scores);  // atomic

}  // namespace nmtzoo
