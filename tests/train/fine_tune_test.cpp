// SPDX-License-Identifier: MIT
// training.init_from: a new run starting from another run's weights.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <sstream>
#include <utility>
#include <vector>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/train/trainer.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

class FineTune : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ostringstream log;
    Trainer(run_.config(), false, log).train();
    parent_ = run_.config().training.output_dir + "/checkpoints/checkpoint_last.pt";
    ASSERT_TRUE(fs::exists(parent_)) << log.str();
  }

  // A new run folder starting from the parent's last checkpoint.
  RunConfig child(const std::vector<std::string>& overrides = {}) const {
    RunConfig config = run_.config();
    config.training.output_dir = run_.path("child");
    config.training.init_from = parent_;
    apply_overrides(config, overrides);
    return config;
  }

  static std::string error_of(const RunConfig& config) {
    std::ostringstream log;
    try {
      Trainer trainer(config, false, log);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no error)";
  }

  testing::TinyRun run_{
      "transformer",
      {"training.max_steps=12", "training.valid_every=0", "training.valid_bleu=false",
       "training.best_metric=loss", "training.warmup_steps=4"}};
  std::string parent_;
};

double largest_difference(EncoderDecoder& a, EncoderDecoder& b) {
  auto pb = b.named_parameters();
  double largest = 0;
  for (const auto& item : a.named_parameters()) {
    largest = std::max(largest, (item.value() - pb[item.key()]).abs().max().item<double>());
  }
  return largest;
}

TEST_F(FineTune, StartsFromTheWeightsWithFreshOptimizerScheduleAndProgress) {
  std::ostringstream log;
  Trainer trainer(child(), false, log);
  EXPECT_NE(log.str().find("fine-tuning from " + parent_ +
                           " at step 0 (fresh optimizer, fresh "
                           "schedule, fresh progress)"),
            std::string::npos)
      << log.str();
  auto parent = load_trained_model(parent_, torch::kCPU);
  EXPECT_EQ(largest_difference(trainer.model(), *parent.model), 0.0);
  EXPECT_EQ(trainer.engine().progress().step, 0);
  EXPECT_EQ(trainer.engine().progress().schedule_offset, 0);
  TrainResult result = trainer.train();
  EXPECT_EQ(result.progress.step, 12);
  EXPECT_GT(largest_difference(trainer.model(), *parent.model), 0.0);
}

TEST_F(FineTune, KeptOptimizerScheduleAndProgressContinueTheParentsRun) {
  std::ostringstream log;
  RunConfig config = child({"training.reset_optimizer=false", "training.reset_schedule=false",
                            "training.reset_progress=false", "training.max_steps=14"});
  Trainer trainer(config, false, log);
  EXPECT_EQ(trainer.engine().progress().step, 12);
  EXPECT_EQ(trainer.engine().progress().schedule_offset, 0);
  EXPECT_EQ(trainer.train().progress.step, 14) << "max_steps counts the parent's updates";

  // Counts kept, schedule restarted: the schedule runs 12 steps behind the count.
  RunConfig restarted = child({"training.reset_progress=false"});
  restarted.training.output_dir = run_.path("child2");
  Trainer again(restarted, false, log);
  EXPECT_EQ(again.engine().progress().step, 12);
  EXPECT_EQ(again.engine().progress().schedule_offset, -12);
}

TEST_F(FineTune, AnotherModelOrTokenizerIsAClearError) {
  const std::string model_error = error_of(child({"model.d_model=48"}));
  EXPECT_NE(model_error.find("training.init_from: '" + parent_ + "' holds another model"),
            std::string::npos)
      << model_error;
  EXPECT_NE(model_error.find("model.d_model: 32 in the checkpoint, 48 now"), std::string::npos)
      << model_error;
  EXPECT_EQ(error_of(child({"model.dropout=0.3", "training.max_steps=1"})), "(no error)")
      << "dropout may change";

  // A tokenizer of the run's own, trained on the same data with another vocabulary size.
  RunConfig other = run_.config();
  apply_overrides(other, {"tokenizer.prefix=" + run_.path("other/spm"), "tokenizer.vocab_size=36"});
  std::ostringstream log;
  prepare_tokenizers(other, log);
  const std::string tokenizer_error =
      error_of(child({"tokenizer.prefix=" + run_.path("other/spm"), "tokenizer.vocab_size=36"}));
  EXPECT_NE(tokenizer_error.find("was trained with another tokenizer than this run's"),
            std::string::npos)
      << tokenizer_error;
  EXPECT_NE(error_of(child({"training.init_from=" + run_.path("missing.pt")}))
                .find("training.init_from: no checkpoint at '" + run_.path("missing.pt") + "'"),
            std::string::npos);
}

TEST_F(FineTune, ARunWithoutTokenizerFilesAdoptsTheCheckpointsOwn) {
  std::ostringstream log;
  RunConfig config = child({"tokenizer.prefix=" + run_.path("child/spm")});
  Trainer trainer(config, false, log);
  EXPECT_NE(log.str().find("adopted the tokenizer embedded in " + parent_), std::string::npos)
      << log.str();
  EXPECT_EQ(testing::read_text(run_.path("child/spm.model")),
            testing::read_text(run_.path("spm.model")));
}

// What can be checked of training.init_from is checked before the run trains a tokenizer or
// prepares data, by nmtzoo-train and nmtzoo-prepare alike: a missing path, a file that is no
// checkpoint, another architecture's checkpoint, another model.
TEST_F(FineTune, AnUnusableInitFromIsRefusedBeforeAnythingIsPrepared) {
  const std::string spm = run_.path("child/spm");  // the child's own tokenizer: none yet
  auto untouched = [&](const std::string& what) {
    EXPECT_FALSE(fs::exists(spm + ".model")) << what;
    EXPECT_FALSE(fs::exists(run_.path("child/data-bin"))) << what;
  };
  testing::write_text(run_.path("notes.pt"), "not a checkpoint\n");
  testing::TinyRun rnn("rnn_bahdanau");
  const std::string rnn_checkpoint = rnn.save_untrained_checkpoint();
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {run_.path("missing.pt"),
       {"training.init_from: no checkpoint at '" + run_.path("missing.pt") + "'"}},
      {run_.path("notes.pt"),
       {"training.init_from: '" + run_.path("notes.pt") + "' is not a readable nmtzoo checkpoint"}},
      {rnn_checkpoint,
       {"training.init_from: '" + rnn_checkpoint + "' holds another model than this config " +
            "describes:",
        "\n  model.arch: \"rnn_bahdanau\" in the checkpoint, \"transformer\" now"}},
  };
  for (const auto& [path, messages] : cases) {
    const std::string error =
        error_of(child({"tokenizer.prefix=" + spm, "training.init_from=" + path}));
    for (const auto& message : messages) {
      EXPECT_NE(error.find(message), std::string::npos) << error;
    }
    untouched(path);
    EXPECT_EQ(testing::run({testing::bin("nmtzoo-prepare"), run_.config_path(), "--set",
                            "training.output_dir=" + run_.path("child"), "--set",
                            "tokenizer.prefix=" + spm, "--set", "training.init_from=" + path, "-q"},
                           "", run_.path("out.txt"), run_.path("err.txt")),
              1)
        << path;
    const std::string err = testing::read_text(run_.path("err.txt"));
    for (const auto& message : messages) {
      EXPECT_NE(err.find(message), std::string::npos) << err;
    }
    untouched("nmtzoo-prepare " + path);
  }
  const std::string model_error = error_of(child({"tokenizer.prefix=" + spm, "model.d_model=48"}));
  EXPECT_NE(model_error.find("model.d_model: 32 in the checkpoint, 48 now"), std::string::npos)
      << model_error;
  untouched("model.d_model");
}

}  // namespace
}  // namespace nmtzoo
