// What keeps a run folder sound: one trainer at a time, no partial files left behind, and every
// config or data problem found before training starts.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "core/config/loader.h"
#include "core/io/directory_lock.h"
#include "core/io/text_file.h"
#include "core/runtime/checkpoint.h"
#include "core/train/trainer.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kQuickRun{"training.max_steps=4", "training.valid_every=2",
                                         "training.valid_bleu=false", "training.best_metric=loss"};

TEST(RunFolder, ASecondTrainerOnTheSameFolderIsRefusedNamingTheFirst) {
  testing::TinyRun run("transformer", {"training.max_steps=100000", "training.valid_bleu=false",
                                       "training.best_metric=loss"});
  const std::string dir = run.config().training.output_dir;
  testing::Subprocess first({testing::bin("nmtzoo-train"), "--config", run.config_path()}, "",
                            run.path("out1.txt"), run.path("err1.txt"));
  for (int i = 0; i < 600 && !fs::exists(dir + "/checkpoints/checkpoint_last.pt"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(fs::exists(dir + "/checkpoints/checkpoint_last.pt"));
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-train"), "--config", run.config_path(), "--resume"},
                         "", run.path("out2.txt"), run.path("err2.txt")),
            1);
  const std::string err = testing::read_text(run.path("err2.txt"));
  EXPECT_NE(err.find("run folder '" + dir + "' is in use by process " +
                     std::to_string(first.pid()) + " (nmtzoo-train)"),
            std::string::npos) << err;
  first.signal(SIGKILL);
  first.wait();
  // The kernel released the dead trainer's lock: resuming works at once.
  std::ostringstream log;
  RunConfig resumed = run.config();
  apply_overrides(resumed, {"training.max_steps=1"});
  EXPECT_NO_THROW(Trainer(resumed, true, log));
}

TEST(RunFolder, ALockIsExclusiveWithinAProcessToo) {
  testing::TempDir dir;
  DirectoryLock held(dir.path("run"), "first");
  EXPECT_THROW(DirectoryLock(dir.path("run"), "second"), IoError);
}

TEST(RunFolder, PartialFilesOfAKilledRunAreRemovedOnResume) {
  testing::TinyRun run("transformer", kQuickRun);
  const std::string dir = run.config().training.output_dir;
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  // What a SIGKILL during a save leaves (PID 4194305 is above Linux's pid_max).
  testing::write_text(dir + "/checkpoints/.checkpoint_6.pt.tmp.4194305", "partial");
  testing::write_text(dir + "/checkpoints/.checkpoint_last.pt.tmp.4194305", "partial");
  testing::write_text(dir + "/.curve_train_loss.svg.tmp.4194305", "partial");
  RunConfig longer = run.config();
  apply_overrides(longer, {"training.max_steps=6"});
  Trainer resumed(longer, true, log);
  EXPECT_NE(log.str().find("removed 3 partial file(s) left by a killed run"), std::string::npos)
      << log.str();
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(RunFolder, AnEmptyValidationSetIsFoundBeforeTrainingNamingTheFile) {
  testing::TinyRun run("transformer", kQuickRun);
  testing::write_text(run.config().corpus_path("valid", "src"), "");
  testing::write_text(run.config().corpus_path("valid", "tgt"), "");
  std::ostringstream log;
  try {
    Trainer trainer(run.config(), false, log);
    FAIL() << "an empty validation set was accepted";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()),
              "the validation set '" + run.config().corpus_path("valid", "src") + "' is empty");
  }
  EXPECT_FALSE(fs::exists(run.config().training.output_dir + "/checkpoints/checkpoint_last.pt"));
}

TEST(RunFolder, NmtzooConfigRejectsWhatNmtzooTrainRejects) {
  testing::TinyRun run("transformer");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"model.heads=3", "model.heads"},
      {"model.arch=transfomer", "model.arch"},
      {"model.encoder_layers=100000000", "model.encoder_layers 100000000 is out of range"},
      {"model.d_model=1000000000", "model.d_model 1000000000 is out of range"},
      {"training.valid_bleu=false", "training.best_metric is bleu, which needs"},
  };
  for (const auto& [override_text, message] : cases) {
    for (const std::string app : {"nmtzoo-config", "nmtzoo-train"}) {
      std::vector<std::string> args{testing::bin(app), run.config_path(), "--set", override_text};
      if (app == "nmtzoo-train") args.insert(args.begin() + 1, "--config");
      EXPECT_EQ(testing::run(args, "", run.path("out.txt"), run.path("err.txt")), 1)
          << app << " " << override_text;
      const std::string err = testing::read_text(run.path("err.txt"));
      EXPECT_NE(err.find(message), std::string::npos) << app << ": " << err;
    }
  }
}

TEST(RunFolder, ADirectoryGivenAsACheckpointIsNamedAsOne) {
  testing::TempDir dir;
  try {
    read_checkpoint_info(dir.path());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint '" + dir.path() + "' is a directory, not a checkpoint file");
  }
}

}  // namespace
}  // namespace nmtzoo
