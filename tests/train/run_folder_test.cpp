// SPDX-License-Identifier: MIT
// What keeps a run folder sound: one trainer at a time, no partial files left behind, and every
// config or data problem found before training starts.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>

#include "libtorch/runtime/checkpoint.h"
#include "libtorch/train/trainer.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/dataset_prepare.h"
#include "torch_free/data/tokenizers.h"
#include "torch_free/io/directory_lock.h"
#include "torch_free/io/text_file.h"

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
            std::string::npos)
      << err;
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

// A folder this process cannot make, and mkdir's errno for it: one under a read-only folder, or,
// for root (whom permissions do not stop), one under /sys, where mkdir is refused (EPERM, or EROFS
// where sysfs is mounted read-only). Either way not ENOENT, which is all that opening the lock
// file in the missing folder would say. {"", 0} when neither works here.
std::pair<std::string, int> folder_that_cannot_be_made(const testing::TempDir& dir) {
  const std::string readonly = dir.path("readonly");
  fs::create_directories(readonly);
  fs::permissions(readonly, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string probe = readonly + "/runs";
  if (::mkdir(probe.c_str(), 0755) != 0) return {probe + "/x", errno};
  ::rmdir(probe.c_str());
  const std::string sys = "/sys/nmtzoo_lock_test_" + std::to_string(::getpid());
  if (::mkdir(sys.c_str(), 0755) != 0) return {sys + "/run", errno};
  ::rmdir(sys.c_str());
  return {"", 0};
}

TEST(RunFolder, AFolderThatCannotBeMadeIsReportedWithTheRealReason) {
  testing::TempDir dir;
  const auto [folder, error_number] = folder_that_cannot_be_made(dir);
  if (folder.empty()) {
    NMTZOO_SKIP_OR_FAIL("no folder here that mkdir refuses (root, and /sys writable?)");
  }
  ASSERT_NE(error_number, ENOENT) << folder;
  try {
    DirectoryLock lock(folder, "nmtzoo-train");
    FAIL() << "locked " << folder;
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot create folder '" + folder + "': " + std::strerror(error_number));
  }
  fs::permissions(dir.path("readonly"), fs::perms::owner_all);
  // A file where a folder should be: ENOTDIR, for root too.
  testing::write_text(dir.path("plain"), "a file\n");
  try {
    DirectoryLock lock(dir.path("plain/run"), "nmtzoo-prepare");
    FAIL() << "locked a folder under a file";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot create folder '" + dir.path("plain/run") + "': " + std::strerror(ENOTDIR));
  }
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

// The data-bin's files (but the lock), each with its bytes and modification time.
std::map<std::string, std::pair<std::string, int64_t>> dataset_files(const std::string& dir) {
  std::map<std::string, std::pair<std::string, int64_t>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == ".lock") continue;
    files[name] = {testing::read_text(entry.path().string()),
                   static_cast<int64_t>(entry.last_write_time().time_since_epoch().count())};
  }
  return files;
}

// A resume the checkpoint refuses is refused before anything of the run is prepared: the data-bin
// of the run stays as it was, byte for byte and time for time; nmtzoo-prepare, which would have
// rewritten it for the edited config, refuses the same edit.
TEST(RunFolder, ARefusedResumeLeavesTheRunsDataAsItWas) {
  testing::TinyRun run("transformer", kQuickRun);
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  const std::string data_bin = run.config().dataset_dir();
  const auto before = dataset_files(data_bin);
  ASSERT_EQ(before.count(kManifestName), 1u);
  RunConfig edited = run.config();
  apply_overrides(edited, {"data.max_len=20"});
  try {
    Trainer trainer(edited, true, log);
    FAIL() << "resumed with another data.max_len";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find("cannot resume: the config's data, tokenizer or model keys differ from "
                           "the checkpoint's:"),
              0u)
        << message;
    EXPECT_NE(message.find("\n  data.max_len: 40 in the checkpoint, 20 now"), std::string::npos)
        << message;
  }
  EXPECT_EQ(dataset_files(data_bin), before);

  EXPECT_EQ(testing::run({testing::bin("nmtzoo-prepare"), run.config_path(), "--set",
                          "data.max_len=20", "-q"},
                         "", run.path("out.txt"), run.path("err.txt")),
            1);
  const std::string err = testing::read_text(run.path("err.txt"));
  EXPECT_NE(err.find("error: nothing was prepared: run folder '" + run.config().run_dir() +
                     "' holds checkpoints"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("\n  data.max_len: 40 in the checkpoint, 20 now"), std::string::npos) << err;
  EXPECT_EQ(dataset_files(data_bin), before);
  EXPECT_NO_THROW(Trainer(run.config(), true, log)) << "the run itself still resumes";
}

// Two nmtzoo-prepare at once on a fresh run: one trains the tokenizer and prepares the dataset,
// the other waits for it, then finds both done and up to date. The test holds the dataset
// folder's lock while they start, so that both are at the locks before either trains anything
// (without the tokenizer under the lock, both would be training it then).
TEST(RunFolder, TwoPreparationsAtOnceTrainTheTokenizerOnce) {
  testing::TinyRun run("transformer");
  const std::string prefix = run.path("run/spm");  // TinyRun trained <dir>/spm, not this one
  RunConfig config = run.config();
  apply_overrides(config, {"tokenizer.prefix=" + prefix});
  const std::vector<std::string> args{testing::bin("nmtzoo-prepare"), run.config_path(), "--set",
                                      "tokenizer.prefix=" + prefix, "-q"};
  auto held = std::make_unique<DirectoryLock>(config.dataset_dir(), "the test");
  testing::Subprocess first(args, "", run.path("out1.txt"), run.path("err1.txt"));
  testing::Subprocess second(args, "", run.path("out2.txt"), run.path("err2.txt"));
  auto logs = [&] {
    return testing::read_text(run.path("err1.txt")) + "\n---\n" +
           testing::read_text(run.path("err2.txt"));
  };
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  for (int i = 0; i < 600 && count(logs(), "waiting for another preparation") < 2 &&
                  count(logs(), "error:") == 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(count(logs(), "waiting for another preparation"), 2) << logs();
  EXPECT_FALSE(fs::exists(prefix + ".model"));
  held.reset();
  EXPECT_EQ(first.wait(), 0) << logs();
  EXPECT_EQ(second.wait(), 0) << logs();
  EXPECT_EQ(count(logs(), "trained tokenizer "), 1) << logs();
  EXPECT_EQ(count(logs(), "preparing the binary dataset"), 1) << logs();
  EXPECT_EQ(count(logs(), "is up to date"), 1) << logs();
  const std::string fingerprint = tokenizer_fingerprint(load_tokenizers(config));
  EXPECT_EQ(read_manifest(config.dataset_dir()).tokenizer_fingerprint, fingerprint);
  EXPECT_EQ(dataset_staleness(config, fingerprint), "");
}

}  // namespace
}  // namespace nmtzoo
