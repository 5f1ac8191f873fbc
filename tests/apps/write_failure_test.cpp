// SPDX-License-Identifier: MIT
// Writes that fail (a full disk, a file-size limit, a bad path, an output that is an input) end
// the apps with a clear error naming the path, never an abort, and never lose or damage a file
// already written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "libtorch/runtime/checkpoint.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

const std::string kFullDiskLibrary = "LD_PRELOAD=" NMTZOO_WRITE_FAILURE_LIBRARY;

// Runs an app with writes to files whose path contains `pattern` failing with ENOSPC.
int run_with_full_disk(const std::vector<std::string>& args, const std::string& pattern,
                       const testing::TinyRun& run) {
  testing::Subprocess app(args, "", run.path("out.txt"), run.path("err.txt"),
                          {kFullDiskLibrary, "NMTZOO_FAIL_WRITES_TO=" + pattern});
  return app.wait();
}

std::vector<std::string> temporary_files_below(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

std::vector<std::string> train_args(const testing::TinyRun& run) {
  return {testing::bin("nmtzoo-train"), "--config", run.config_path(),          "--set",
          "training.max_steps=8",       "--set",    "training.valid_every=4",   "--set",
          "training.valid_bleu=false",  "--set",    "training.best_metric=loss"};
}

TEST(WriteFailure, AFullDiskDuringACheckpointSaveStopsTrainingCleanlyAndResumable) {
  testing::TinyRun run("transformer");
  const std::string checkpoints = run.config().training.output_dir + "/checkpoints";
  EXPECT_EQ(run_with_full_disk(train_args(run), "checkpoint_8.pt", run), 1);
  const std::string err = testing::read_text(run.path("err.txt"));
  EXPECT_NE(err.find("error: writing '" + checkpoints +
                     "/checkpoint_8.pt' failed: No space left on device (disk full?)"),
            std::string::npos)
      << err;
  EXPECT_EQ(temporary_files_below(run.config().training.output_dir), std::vector<std::string>{});
  EXPECT_EQ(read_checkpoint_info(checkpoints + "/checkpoint_last.pt").progress.step, 4);

  std::vector<std::string> resume = train_args(run);
  resume.push_back("--resume");
  ASSERT_EQ(testing::run(resume, "", run.path("out.txt"), run.path("err.txt")), 0)
      << testing::read_text(run.path("err.txt"));
  EXPECT_EQ(read_checkpoint_info(checkpoints + "/checkpoint_last.pt").progress.step, 8);
}

TEST(WriteFailure, AFileSizeLimitDuringACheckpointSaveIsAnErrorNotAnAbort) {
  testing::TinyRun run("transformer");
  // As a nearly full quota would: checkpoints (~370 KB) exceed the limit, small files do not.
  std::vector<std::string> args{"/bin/bash", "-c", "trap '' XFSZ; ulimit -f 150; exec \"$@\"",
                                "bash"};
  for (const std::string& arg : train_args(run)) args.push_back(arg);
  EXPECT_EQ(testing::run(args, "", run.path("out.txt"), run.path("err.txt")), 1);
  const std::string err = testing::read_text(run.path("err.txt"));
  EXPECT_NE(err.find("/checkpoint_4.pt' failed: File too large (disk full?)"), std::string::npos)
      << err;
  EXPECT_EQ(temporary_files_below(run.config().training.output_dir), std::vector<std::string>{});
}

TEST(WriteFailure, ATruncatedTokenizerModelIsAnErrorAndNeverReplacesAnything) {
  testing::TinyRun run("transformer");
  // SentencePiece itself reports no failed write: the model (~240 KB) is cut at the limit.
  const std::string prefix = run.path("new_spm/spm");
  std::vector<std::string> args{"/bin/bash",
                                "-c",
                                "trap '' XFSZ; ulimit -f 100; exec \"$@\"",
                                "bash",
                                testing::bin("nmtzoo-prepare"),
                                run.config_path(),
                                "--set",
                                "tokenizer.prefix=" + prefix};
  EXPECT_EQ(testing::run(args, "", run.path("out.txt"), run.path("err.txt")), 1);
  const std::string err = testing::read_text(run.path("err.txt"));
  EXPECT_NE(err.find("error: writing tokenizer model '" + prefix + ".model' failed (disk full?)"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(prefix + ".model"));
  EXPECT_EQ(temporary_files_below(run.path("new_spm")), std::vector<std::string>{});
}

TEST(WriteFailure, AverageAndWeightsImportReportAFullDiskAndLeaveNoFile) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  EXPECT_EQ(run_with_full_disk({testing::bin("nmtzoo-average"), checkpoint, checkpoint, "-o",
                                run.path("averaged.pt")},
                               "averaged.pt", run),
            1);
  EXPECT_NE(testing::read_text(run.path("err.txt"))
                .find("error: writing '" + run.path("averaged.pt") + "' failed: No space left"),
            std::string::npos)
      << testing::read_text(run.path("err.txt"));
  ASSERT_EQ(testing::run({testing::bin("nmtzoo-weights"), "export", checkpoint, run.path("w.pt")},
                         "", run.path("out.txt"), run.path("err.txt")),
            0)
      << testing::read_text(run.path("err.txt"));
  EXPECT_EQ(run_with_full_disk({testing::bin("nmtzoo-weights"), "import", checkpoint,
                                run.path("w.pt"), run.path("imported.pt")},
                               "imported.pt", run),
            1);
  EXPECT_NE(testing::read_text(run.path("err.txt"))
                .find("error: writing '" + run.path("imported.pt") + "' failed: No space left"),
            std::string::npos)
      << testing::read_text(run.path("err.txt"));
  EXPECT_FALSE(fs::exists(run.path("averaged.pt")));
  EXPECT_FALSE(fs::exists(run.path("imported.pt")));
  EXPECT_EQ(temporary_files_below(run.path("")), std::vector<std::string>{});
}

// An output that is one of the inputs would replace it (49 bytes of text where a checkpoint
// was): refused before any work, naming both, and the input kept.
TEST(WriteFailure, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  testing::TinyRun run("transformer");
  const std::string checkpoint = run.save_untrained_checkpoint();
  const std::string weights = run.path("w.pt");
  ASSERT_EQ(testing::run({testing::bin("nmtzoo-weights"), "export", checkpoint, weights}, "",
                         run.path("out.txt"), run.path("err.txt")),
            0)
      << testing::read_text(run.path("err.txt"));
  const std::string checkpoint_bytes = testing::read_text(checkpoint);
  const std::string weights_bytes = testing::read_text(weights);
  const std::string same = "' is the same file as ";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{testing::bin("nmtzoo-weights"), "export", checkpoint, checkpoint},
       "error: weights '" + checkpoint + same + "checkpoint '" + checkpoint + "'"},
      {{testing::bin("nmtzoo-weights"), "import", checkpoint, weights, checkpoint},
       "error: output '" + checkpoint + same + "checkpoint '" + checkpoint + "'"},
      {{testing::bin("nmtzoo-weights"), "import", checkpoint, weights, weights},
       "error: output '" + weights + same + "weights '" + weights + "'"},
      {{testing::bin("nmtzoo-average"), checkpoint, checkpoint, "-o", checkpoint},
       "error: -o '" + checkpoint + same + "input '" + checkpoint + "'"},
      {{testing::bin("nmtzoo-shortlist"), checkpoint, "-o", checkpoint},
       "error: -o '" + checkpoint + same + "checkpoint '" + checkpoint + "'"},
  };
  for (const auto& [args, message] : cases) {
    EXPECT_EQ(testing::run(args, "", run.path("out.txt"), run.path("err.txt")), 1) << args[1];
    const std::string err = testing::read_text(run.path("err.txt"));
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_TRUE(testing::read_text(checkpoint) == checkpoint_bytes) << args[1];
    EXPECT_TRUE(testing::read_text(weights) == weights_bytes) << args[1];
  }
  EXPECT_EQ(temporary_files_below(run.path("")), std::vector<std::string>{});
}

}  // namespace
}  // namespace nmtzoo
