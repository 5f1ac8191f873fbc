// SPDX-License-Identifier: MIT
#include "libtorch/train/checkpoint_folder.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "torch_free/io/atomic_file.h"
#include "torch_free/io/checkpoint_files.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

// Points `link` at `target`'s contents atomically (a hard link renamed into place).
void link_atomically(const fs::path& target, const fs::path& link) {
  const fs::path temporary = temporary_path_beside(link.string());
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_hard_link(target, temporary, ec);
  if (ec) fs::copy_file(target, temporary, fs::copy_options::overwrite_existing);
  fs::rename(temporary, link);
}

}  // namespace

CheckpointFolder::CheckpointFolder(std::string dir, int64_t keep_last, int64_t keep_best,
                                   std::string metric, bool higher_is_better)
    : dir_(std::move(dir)),
      keep_last_(keep_last),
      keep_best_(keep_best),
      metric_(std::move(metric)),
      higher_is_better_(higher_is_better) {}

std::string CheckpointFolder::save(int64_t step, std::optional<double> score, bool is_best,
                                   const std::function<void(const std::string&)>& write) {
  const fs::path dir = dir_;
  const fs::path numbered = dir / fmt::format("checkpoint_{}.pt", step);
  write(numbered.string());
  link_atomically(numbered, dir / "checkpoint_last.pt");
  if (is_best) link_atomically(numbered, dir / "checkpoint_best.pt");

  const std::string scores_path = checkpoint_scores_path(dir_);
  CheckpointScores scores = read_checkpoint_scores(scores_path);
  if (scores.metric != metric_ || scores.higher_is_better != higher_is_better_) {
    scores =
        CheckpointScores{metric_, higher_is_better_, {}};  // another metric's are not comparable
  }
  if (score) scores.by_step[step] = *score;
  const auto files = numbered_checkpoints(dir_);
  std::set<int64_t> kept;
  const auto keep_last = static_cast<size_t>(keep_last_);
  for (size_t i = files.size() > keep_last ? files.size() - keep_last : 0; i < files.size(); ++i) {
    kept.insert(files[i].first);
  }
  for (int64_t best : scores.best(static_cast<size_t>(keep_best_))) kept.insert(best);
  std::map<int64_t, double> kept_scores;
  for (const auto& [scored_step, value] : scores.by_step) {
    if (kept.count(scored_step) > 0) kept_scores[scored_step] = value;
  }
  scores.by_step = std::move(kept_scores);
  // The scores are written before any file goes, so they never name a deleted checkpoint for
  // longer than a crash between the two steps takes to be repaired by the next save.
  write_checkpoint_scores(scores_path, scores);
  for (const auto& [file_step, path] : files) {
    if (kept.count(file_step) == 0) fs::remove(path);
  }
  return numbered.string();
}

}  // namespace nmtzoo
