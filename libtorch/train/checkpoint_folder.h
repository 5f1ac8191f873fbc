// SPDX-License-Identifier: MIT
// The checkpoints folder of a run: numbered checkpoints (checkpoint_<step>.pt), the newest
// training.keep_last of them and the training.keep_best best-validated ones kept, and
// checkpoint_last.pt / checkpoint_best.pt pointing at one of them (hard links, replaced
// atomically; copies where the file system has no hard links). The validation score of every
// kept checkpoint is in scores.json (torch_free/io/checkpoint_files.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace nmtzoo {

class CheckpointFolder {
 public:
  // `metric` names the validation score (training.best_metric); `higher_is_better` is false for
  // a loss.
  CheckpointFolder(std::string dir, int64_t keep_last, int64_t keep_best, std::string metric,
                   bool higher_is_better);

  const std::string& dir() const { return dir_; }
  std::string last() const { return dir_ + "/checkpoint_last.pt"; }

  // Writes checkpoint_<step>.pt through `write(path)` (which must write atomically), points
  // checkpoint_last.pt (and, when `is_best`, checkpoint_best.pt) at it, records `score` (a
  // checkpoint saved without validating has none), then deletes the numbered checkpoints that are
  // neither among the newest keep_last nor among the keep_best best scored. Returns the numbered
  // path.
  std::string save(int64_t step, std::optional<double> score, bool is_best,
                   const std::function<void(const std::string&)>& write);

 private:
  std::string dir_;
  int64_t keep_last_;
  int64_t keep_best_;
  std::string metric_;
  bool higher_is_better_;
};

}  // namespace nmtzoo
