// SPDX-License-Identifier: MIT
#include "libtorch/train/trainer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/io/checkpoint_files.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> records(const std::string& run_dir, const std::string& type) {
  std::vector<nlohmann::json> found;
  std::ifstream in(run_dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record["type"] == type) found.push_back(record);
  }
  return found;
}

class BothArchitectures : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Trainer, BothArchitectures,
                         ::testing::Values("transformer", "rnn_bahdanau"));

TEST_P(BothArchitectures, LearnsToReverseSequences) {
  testing::TinyRun run(
      GetParam(),
      {"model.d_model=64", "model.ffn_dim=128", "model.encoder_layers=2", "model.decoder_layers=2",
       "model.emb_dim=48", "model.hidden_dim=64", "model.attention_dim=64", "model.readout_dim=48",
       "training.max_steps=600", "training.valid_every=150", "training.valid_beam=1",
       "training.max_tokens=600", "training.threads=1"},
      3000);
  std::ostringstream log;
  Trainer trainer(run.config(), false, log);
  TrainResult result = trainer.train();
  EXPECT_GT(result.last_validation.bleu, 80.0) << log.str();
  EXPECT_GT(result.progress.best_score, 90.0) << log.str();  // checkpoint_best.pt
}

// Trains 14 updates straight and 6 + 8 with a resume between, with `extra` settings; the logged
// losses must be equal. Returns them.
std::vector<double> expect_exact_resume(const std::vector<std::string>& extra) {
  std::vector<std::string> settings{"training.log_every=1",      "training.valid_every=0",
                                    "training.valid_bleu=false", "training.best_metric=loss",
                                    "model.dropout=0.2",         "training.max_tokens=200"};
  settings.insert(settings.end(), extra.begin(), extra.end());
  auto with = [&](const std::string& steps) {
    auto all = settings;
    all.push_back(steps);
    return all;
  };
  testing::TinyRun straight("transformer", with("training.max_steps=14"));
  std::ostringstream log;
  Trainer(straight.config(), false, log).train();

  testing::TinyRun interrupted("transformer", with("training.max_steps=6"));
  Trainer(interrupted.config(), false, log).train();
  RunConfig longer = interrupted.config();
  apply_overrides(longer, {"training.max_steps=14"});
  Trainer(longer, true, log).train();

  auto a = records(straight.config().training.output_dir, "train");
  auto b = records(interrupted.config().training.output_dir, "train");
  EXPECT_EQ(a.size(), 14u);
  EXPECT_EQ(b.size(), 14u);
  std::vector<double> losses;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i]["step"], b[i]["step"]);
    EXPECT_EQ(a[i]["loss"].get<double>(), b[i]["loss"].get<double>()) << "step " << i + 1;
    losses.push_back(a[i]["loss"].get<double>());
  }
  auto valid_a = records(straight.config().training.output_dir, "valid");
  auto valid_b = records(interrupted.config().training.output_dir, "valid");
  // The interrupted run also validated when it stopped at step 6; every other step matches.
  size_t matched = 0;
  for (const auto& va : valid_a) {
    for (const auto& vb : valid_b) {
      if (vb["step"] != va["step"]) continue;
      EXPECT_EQ(va["loss"].get<double>(), vb["loss"].get<double>())
          << "validation at step " << va["step"];
      ++matched;
      break;
    }
  }
  EXPECT_EQ(matched, valid_a.size());
  return losses;
}

TEST(Trainer, ResumedRunLossesEqualAnUninterruptedRun) { expect_exact_resume({}); }

// Subword sampling is part of what a resume must reproduce (the resume falls mid-epoch, and the
// 14 updates cross into the next epoch's fresh segmentations).
TEST(Trainer, ResumedRunWithSubwordSamplingEqualsAnUninterruptedRun) {
  auto sampled = expect_exact_resume({"tokenizer.sampling_alpha=0.2"});
  auto plain = expect_exact_resume({});
  EXPECT_NE(sampled, plain) << "sampling changed what was trained on";
}

// The weight average is part of the state a resume restores (validation losses use it).
TEST(Trainer, ResumedRunWithAWeightAverageEqualsAnUninterruptedRun) {
  expect_exact_resume({"training.ema_decay=0.95", "training.valid_every=5"});
}

// The rate of update k is set from the budget used before it, (k - 1) / max_steps, and reaches
// min_lr only as the budget runs out.
TEST(Trainer, LinearScheduleDecaysOverTheStepBudget) {
  testing::TinyRun run(
      "transformer", {"training.max_steps=10", "training.log_every=1", "training.valid_every=0",
                      "training.valid_bleu=false", "training.best_metric=loss",
                      "training.schedule=linear", "training.lr=0.001", "training.warmup_steps=0"});
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  auto train = records(run.config().training.output_dir, "train");
  ASSERT_EQ(train.size(), 10u);
  for (const auto& record : train) {
    const double step = record["step"].get<double>();
    EXPECT_NEAR(record["lr"].get<double>(), 0.001 * (1 - (step - 1) / 10), 1e-12)
        << "step " << step;
  }
}

TEST(Trainer, NonFiniteLossSkipsTheUpdate) {
  testing::TinyRun run("transformer", {"training.max_steps=4", "training.valid_bleu=false",
                                       "training.best_metric=loss"});
  std::ostringstream log;
  Trainer trainer(run.config(), false, log);
  int poisoned = 0;
  trainer.engine().hooks.on_batch_loss = [&](at::Tensor& loss, int64_t step) {
    if (step == 2 && poisoned++ == 0) loss = loss * std::numeric_limits<float>::quiet_NaN();
  };
  TrainResult result = trainer.train();
  EXPECT_EQ(poisoned, 2) << "step 2 was tried twice: skipped once, then made";
  EXPECT_EQ(result.progress.step, 4);
  EXPECT_NE(log.str().find("warning: non-finite loss or gradient at step 2; update skipped"),
            std::string::npos)
      << log.str();
  for (const auto& p : trainer.model().parameters()) {
    EXPECT_TRUE(torch::isfinite(p).all().item<bool>());
  }
}

TEST(Trainer, RepeatedNonFiniteLossesAbortWithAClearMessage) {
  testing::TinyRun run("rnn_bahdanau", {"training.max_steps=20", "training.max_bad_steps=3",
                                        "training.valid_bleu=false", "training.best_metric=loss"});
  std::ostringstream log;
  Trainer trainer(run.config(), false, log);
  trainer.engine().hooks.on_batch_loss = [](at::Tensor& loss, int64_t step) {
    if (step >= 3) loss = loss * std::numeric_limits<float>::infinity();
  };
  try {
    trainer.train();
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("3 consecutive updates had a non-finite loss"),
              std::string::npos)
        << e.what();
  }
}

TEST(Trainer, ConfigProblemsAreFoundBeforeTraining) {
  testing::TinyRun run("transformer");
  std::ostringstream log;
  RunConfig no_bleu = run.config();
  apply_overrides(no_bleu, {"training.valid_bleu=false"});  // best_metric stays bleu
  EXPECT_THROW(Trainer(no_bleu, false, log), ConfigError);
  RunConfig cuda = run.config();
  apply_overrides(cuda, {"training.device=cuda", "training.best_metric=loss"});
  if (!torch::cuda::is_available()) {
    try {
      Trainer trainer(cuda, false, log);
      FAIL();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("training.device is cuda"), std::string::npos);
    }
  }
}

TEST(Trainer, BestMetricChrfKeepsTheValidationWithTheHighestChrf) {
  testing::TinyRun run("transformer", {"training.max_steps=8", "training.valid_every=2",
                                       "training.best_metric=chrf"});
  std::ostringstream log;
  TrainResult result = Trainer(run.config(), false, log).train();
  double best = -1;
  int64_t best_step = -1;
  for (const auto& record : records(run.config().training.output_dir, "valid")) {
    if (record.at("chrf").get<double>() > best) {
      best = record.at("chrf").get<double>();
      best_step = record.at("step").get<int64_t>();
    }
  }
  EXPECT_DOUBLE_EQ(result.progress.best_score, best);
  EXPECT_EQ(result.progress.best_step, best_step);
  EXPECT_NE(log.str().find("chrF2 "), std::string::npos) << log.str();
}

TEST(Trainer, RefusesToOverwriteARunWithoutResume) {
  testing::TinyRun run("transformer", {"training.max_steps=2", "training.valid_bleu=false",
                                       "training.best_metric=loss"});
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  EXPECT_THROW(Trainer(run.config(), false, log), std::runtime_error);
  RunConfig changed = run.config();
  apply_overrides(changed, {"model.d_model=48"});
  try {
    Trainer(changed, true, log);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("model.d_model: 32 in the checkpoint, 48 now"),
              std::string::npos)
        << e.what();
  }
}

TEST(Trainer, WritesMetricsCurvesAndKeepsTheLastCheckpoints) {
  testing::TinyRun run("transformer", {"training.max_steps=12", "training.valid_every=3",
                                       "training.keep_last=2", "training.log_every=2"});
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  const std::string dir = run.config().training.output_dir;
  EXPECT_EQ(records(dir, "train").size(), 6u);
  auto valid = records(dir, "valid");
  ASSERT_EQ(valid.size(), 4u);
  for (const char* key : {"bleu", "chrf", "loss"}) EXPECT_TRUE(valid[0].contains(key)) << key;
  EXPECT_TRUE(fs::exists(dir + "/curve_train_loss.svg"));
  EXPECT_TRUE(fs::exists(dir + "/curve_valid_bleu.svg"));
  EXPECT_TRUE(fs::exists(dir + "/config.yaml"));
  std::vector<std::string> numbered;
  for (const auto& entry : fs::directory_iterator(dir + "/checkpoints")) {
    numbered.push_back(entry.path().filename().string());
  }
  std::sort(numbered.begin(), numbered.end());
  EXPECT_EQ(numbered,
            (std::vector<std::string>{"checkpoint_12.pt", "checkpoint_9.pt", "checkpoint_best.pt",
                                      "checkpoint_last.pt", "scores.json"}));
  EXPECT_EQ(read_checkpoint_info(dir + "/checkpoints/checkpoint_last.pt").progress.step, 12);
}

// training.keep_best keeps the best-validated checkpoints beside the newest, with their scores,
// and nmtzoo-average --best averages exactly those.
TEST(TrainApp, KeepsTheBestCheckpointsForAverageBest) {
  testing::TinyRun run("transformer", {"training.max_steps=12", "training.valid_every=2",
                                       "training.keep_last=1", "training.keep_best=2",
                                       "training.valid_bleu=false", "training.best_metric=loss"});
  std::ostringstream log;
  Trainer(run.config(), false, log).train();
  const std::string dir = run.config().training.output_dir + "/checkpoints";
  std::map<int64_t, double> losses;
  for (const auto& record : records(run.config().training.output_dir, "valid")) {
    losses.emplace(record.at("step").get<int64_t>(), record.at("loss").get<double>());
  }
  auto numbered = [&](int64_t step) { return dir + "/checkpoint_" + std::to_string(step) + ".pt"; };
  const CheckpointScores scores = read_checkpoint_scores(checkpoint_scores_path(dir));
  const std::vector<int64_t> best = scores.best(2);
  ASSERT_EQ(best.size(), 2u);
  for (int64_t step : best) {
    EXPECT_EQ(scores.by_step.at(step), losses.at(step)) << step;
    EXPECT_TRUE(fs::exists(numbered(step))) << step;
  }
  for (const auto& [step, loss] : losses) {
    if (step != best[0] && step != best[1]) {
      EXPECT_GE(loss, scores.by_step.at(best[1])) << step;
    }
  }
  EXPECT_LE(numbered_checkpoints(dir).size(), 3u);

  const std::string average = testing::bin("nmtzoo-average") + " --dir " + dir;
  const testing::CommandResult ok =
      testing::run_command(average + " --best 2 -o " + run.path("best2.pt") + " 2>&1");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("the 2 best checkpoints by validation loss"), std::string::npos)
      << ok.output;
  auto parameter = [&](const std::string& path) {
    TrainedModel model = load_trained_model(path, torch::kCPU);
    return model.model->named_parameters().begin()->value().clone();
  };
  EXPECT_TRUE(torch::allclose(parameter(run.path("best2.pt")),
                              (parameter(numbered(best[0])) + parameter(numbered(best[1]))) / 2));

  const testing::CommandResult too_many =
      testing::run_command(average + " --best 3 -o " + run.path("best3.pt") + " 2>&1");
  EXPECT_NE(too_many.status, 0);
  EXPECT_NE(too_many.output.find("asked for the 3 best checkpoints, but '" + dir +
                                 "/scores.json' scores 2"),
            std::string::npos)
      << too_many.output;
}

// Issue 85: nmtzoo-average averaged a de->en and an en->de,fr checkpoint of the same shapes (exit
// 0; the result translated "Ein Ein Ein ..."). Checkpoints of other languages, models or
// vocabularies are refused, naming both, unless --allow-unrelated.
TEST(TrainApp, AverageRefusesUnrelatedCheckpoints) {
  testing::TinyRun run("transformer", {});
  const std::string bilingual = run.save_untrained_checkpoint("bilingual.pt");
  const std::string multilingual =
      run.save_untrained_checkpoint(run.multilingual_config(), "multilingual.pt");
  const std::string average = testing::bin("nmtzoo-average") + " " + bilingual + " " + multilingual;
  const testing::CommandResult refused =
      testing::run_command(average + " -o " + run.path("mixed.pt") + " 2>&1");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.output.find("'" + multilingual + "' and '" + bilingual +
                                "' translate different languages"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("--allow-unrelated"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(run.path("mixed.pt")));
  // Their shapes match (as in the issue): the flag averages them, as the user asked.
  const testing::CommandResult forced =
      testing::run_command(average + " --allow-unrelated -o " + run.path("mixed.pt") + " 2>&1");
  EXPECT_EQ(forced.status, 0) << forced.output;
  EXPECT_TRUE(fs::exists(run.path("mixed.pt")));
}

// The training app, killed with SIGKILL at arbitrary instants (often mid-save, since it saves
// every update), must always leave a loadable checkpoint_last.pt.
TEST(TrainApp, SigkillAtAnyInstantLeavesALoadableCheckpoint) {
  testing::TinyRun run("transformer", {});
  const std::string dir = run.config().training.output_dir;
  for (int round = 0; round < 4; ++round) {
    std::vector<std::string> args{
        testing::bin("nmtzoo-train"), "--config", run.config_path(),           "--set",
        "training.valid_every=1",     "--set",    "training.valid_bleu=false", "--set",
        "training.best_metric=loss",  "--set",    "training.max_steps=100000"};
    if (round > 0) args.push_back("--resume");
    testing::Subprocess trainer(args, "", run.path("out.txt"), run.path("err.txt"));
    // Wait for a first checkpoint, then kill at a pseudo-random moment.
    for (int i = 0; i < 600 && !fs::exists(dir + "/checkpoints/checkpoint_last.pt"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 137 * round));
    trainer.signal(SIGKILL);
    EXPECT_EQ(trainer.wait(), 128 + SIGKILL);
    TrainedModel model = load_trained_model(dir + "/checkpoints/checkpoint_last.pt", torch::kCPU);
    EXPECT_TRUE(model.model != nullptr);
  }
}

TEST(TrainApp, SigtermFinishesTheStepSavesAndExitsZero) {
  testing::TinyRun run("rnn_bahdanau", {});
  const std::string dir = run.config().training.output_dir;
  testing::Subprocess trainer({testing::bin("nmtzoo-train"), "--config", run.config_path(), "--set",
                               "training.valid_every=5", "--set", "training.max_steps=100000"},
                              "", run.path("out.txt"), run.path("err.txt"));
  for (int i = 0; i < 600 && !fs::exists(dir + "/checkpoints/checkpoint_last.pt"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  trainer.signal(SIGTERM);
  EXPECT_EQ(trainer.wait(), 0);
  std::string err = testing::read_text(run.path("err.txt"));
  EXPECT_NE(err.find("interrupted at step"), std::string::npos) << err;
  EXPECT_NE(err.find("--resume"), std::string::npos) << err;
  auto info = read_checkpoint_info(dir + "/checkpoints/checkpoint_last.pt");
  EXPECT_NE(err.find("interrupted at step " + std::to_string(info.progress.step)),
            std::string::npos)
      << err;
  // The summary marks a finished run (experiments/compare.sh reuses those): none when interrupted.
  EXPECT_FALSE(fs::exists(dir + "/training_summary.json"));
}

TEST(TrainApp, AFinishedRunWritesTheSummaryReportsAreBuiltFrom) {
  testing::TinyRun run("rnn_luong", {});
  const std::string dir = run.config().training.output_dir;
  ASSERT_EQ(testing::run({testing::bin("nmtzoo-train"), "--config", run.config_path(), "--set",
                          "training.max_steps=3", "--set", "training.valid_every=2"},
                         "", run.path("out.txt"), run.path("err.txt")),
            0)
      << testing::read_text(run.path("err.txt"));
  std::ifstream in(dir + "/training_summary.json");
  const auto summary = nlohmann::json::parse(in);
  TrainedModel trained = load_trained_model(dir + "/checkpoints/checkpoint_last.pt", torch::kCPU);
  EXPECT_EQ(summary.at("arch"), "rnn_luong");
  EXPECT_EQ(summary.at("parameters").get<int64_t>(), count_parameters(*trained.model));
  EXPECT_EQ(summary.at("updates").get<int64_t>(), 3);
  EXPECT_GT(summary.at("target_tokens").get<int64_t>(), 0);
  EXPECT_GT(summary.at("target_tokens_per_second").get<double>(), 0);
  EXPECT_GT(summary.at("wall_seconds").get<double>(), 0);
  EXPECT_GE(summary.at("best_step").get<int64_t>(), 2);  // validated at steps 2 and 3
  EXPECT_LE(summary.at("best_step").get<int64_t>(), 3);
}

}  // namespace
}  // namespace nmtzoo
