// SPDX-License-Identifier: MIT
#include "libtorch/train/checkpoint_folder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>

#include "tests/support/test_support.h"
#include "torch_free/io/checkpoint_files.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

// Saves one checkpoint per (step, score), each file holding its step.
void save_all(CheckpointFolder& folder, const std::map<int64_t, std::optional<double>>& saves) {
  for (const auto& [step, score] : saves) {
    folder.save(step, score, false,
                [step = step](const std::string& path) { std::ofstream(path) << step; });
  }
}

std::vector<int64_t> kept_steps(const std::string& dir) {
  std::vector<int64_t> steps;
  for (const auto& [step, path] : numbered_checkpoints(dir)) steps.push_back(step);
  return steps;
}

TEST(CheckpointFolder, KeepsTheNewestAndTheBestScored) {
  testing::TempDir dir;
  CheckpointFolder folder(dir.path(), 2, 2, "bleu", true);
  save_all(folder, {{1, 1.0}, {2, 5.0}, {3, 3.0}, {4, 4.0}, {5, 2.0}, {6, 0.5}});
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{2, 4, 5, 6}));
  const CheckpointScores scores = read_checkpoint_scores(checkpoint_scores_path(dir.path()));
  EXPECT_EQ(scores.metric, "bleu");
  EXPECT_TRUE(scores.higher_is_better);
  EXPECT_EQ(scores.by_step, (std::map<int64_t, double>{{2, 5.0}, {4, 4.0}, {5, 2.0}, {6, 0.5}}));
  EXPECT_EQ(scores.best(3), (std::vector<int64_t>{2, 4, 5}));
}

TEST(CheckpointFolder, ALossRanksLowestFirst) {
  testing::TempDir dir;
  CheckpointFolder folder(dir.path(), 1, 2, "loss", false);
  save_all(folder, {{1, 3.0}, {2, 1.5}, {3, 2.0}, {4, 1.0}, {5, 2.5}});
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(read_checkpoint_scores(checkpoint_scores_path(dir.path())).best(2),
            (std::vector<int64_t>{4, 2}));
}

TEST(CheckpointFolder, WithoutKeepBestOnlyTheNewestStay) {
  testing::TempDir dir;
  CheckpointFolder folder(dir.path(), 2, 0, "bleu", true);
  save_all(folder, {{1, 9.0}, {2, 1.0}, {3, 2.0}});
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{2, 3}));
}

// A checkpoint saved without validating (an interrupted run) is kept only while it is new, and a
// later validated save at the same step scores it.
TEST(CheckpointFolder, AnUnscoredCheckpointIsKeptOnlyByRecency) {
  testing::TempDir dir;
  CheckpointFolder folder(dir.path(), 1, 1, "bleu", true);
  save_all(folder, {{1, 2.0}, {2, std::nullopt}, {3, 1.0}});
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{1, 3}));
  save_all(folder, {{3, 4.0}});
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{3}));
}

TEST(CheckpointFolder, ScoresOfAnotherMetricAreDropped) {
  testing::TempDir dir;
  CheckpointFolder by_bleu(dir.path(), 1, 2, "bleu", true);
  save_all(by_bleu, {{1, 40.0}, {2, 41.0}});
  CheckpointFolder by_loss(dir.path(), 1, 2, "loss", false);
  save_all(by_loss, {{3, 1.7}});
  const CheckpointScores scores = read_checkpoint_scores(checkpoint_scores_path(dir.path()));
  EXPECT_EQ(scores.metric, "loss");
  EXPECT_EQ(scores.by_step, (std::map<int64_t, double>{{3, 1.7}}));
  EXPECT_EQ(kept_steps(dir.path()), (std::vector<int64_t>{3}));
}

TEST(CheckpointScores, EqualScoresRankTheEarlierStepFirst) {
  CheckpointScores scores{"bleu", true, {{5, 40.0}, {3, 41.0}, {9, 41.0}}};
  EXPECT_EQ(scores.best(2), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(scores.best(10).size(), 3u);
}

TEST(CheckpointScores, AMissingFileIsEmptyAndAMalformedOneNamesItself) {
  testing::TempDir dir;
  EXPECT_TRUE(read_checkpoint_scores(dir.path("scores.json")).by_step.empty());
  std::ofstream(dir.path("scores.json")) << R"({"metric": "bleu", "checkpoints": []})";
  try {
    read_checkpoint_scores(dir.path("scores.json"));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path("scores.json")), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmtzoo
