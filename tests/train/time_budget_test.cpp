// SPDX-License-Identifier: MIT
#include "libtorch/train/time_budget.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

#include "libtorch/runtime/checkpoint.h"
#include "libtorch/train/trainer.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

TrainConfig budget_config(double max_time, double reference_gflops) {
  TrainConfig config = default_config().training;
  config.max_time = max_time;
  config.reference_gflops = reference_gflops;
  return config;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(TimeBudget, WithoutAReferenceTheBudgetIsWallClockTime) {
  TrainingProgress progress;
  progress.wall_seconds = progress.budget_seconds = 5;  // an earlier session's
  std::ostringstream log;
  TimeBudget budget;
  budget.start(budget_config(5.03, 0), progress, log);
  EXPECT_TRUE(log.str().empty());
  EXPECT_TRUE(progress.budget_sessions.empty()) << "no ceiling is measured without a reference";
  sleep_ms(40);
  budget.update(progress);
  EXPECT_GE(progress.wall_seconds, 5.04);
  EXPECT_DOUBLE_EQ(progress.budget_seconds, progress.wall_seconds);
  EXPECT_TRUE(budget.exhausted(progress));
  EXPECT_EQ(budget.stop_reason(progress), "reached training.max_time = 5.0s");
}

// A reference machine a tenth as fast as this one: each second here is 10 of the budget, and
// the session (with the ceiling it measured) is recorded after the earlier ones. The probe is a
// stand-in: two real measurements disagree by 2x when other tests share the cores (seen under
// ctest --parallel 2); the real probe runs in ARunStopsOnTheScaledBudgetAndAResumeAddsASession.
TEST(TimeBudget, AReferenceScalesTheRemainingBudgetByTheRatioOfCeilings) {
  TrainingProgress progress;
  progress.wall_seconds = 100;
  progress.budget_seconds = 80;
  progress.budget_sessions.push_back({0, 400, 0.8});
  std::ostringstream log;
  TimeBudget budget([] { return 480.0; });
  budget.start(budget_config(3600, 48), progress, log);
  ASSERT_EQ(progress.budget_sessions.size(), 2u);
  const BudgetSession& session = progress.budget_sessions.back();
  EXPECT_DOUBLE_EQ(session.started_at, 100);
  EXPECT_DOUBLE_EQ(session.measured_gflops, 480);
  EXPECT_DOUBLE_EQ(session.scale, 10);
  EXPECT_DOUBLE_EQ(budget.scale(), 10);
  EXPECT_NE(log.str().find("training.reference_gflops"), std::string::npos) << log.str();
  sleep_ms(50);
  budget.update(progress);
  const double session_wall = progress.wall_seconds - 100;
  EXPECT_GE(session_wall, 0.05);
  EXPECT_NEAR(progress.budget_seconds - 80, session_wall * budget.scale(), 1e-9);
  EXPECT_FALSE(budget.exhausted(progress));
  EXPECT_NEAR(budget.fraction(progress), progress.budget_seconds / 3600, 1e-12);
}

// A shared machine that halves its speed mid-run: the time after the next measurement (each
// validation makes one) counts at the new scale, and the change is logged once.
TEST(TimeBudget, EachRemeasurementCountsTheTimeFromThenAtTheMachinesNewSpeed) {
  std::vector<double> ceilings{400, 200, 200};
  size_t measured = 0;
  TimeBudget budget([&] { return ceilings.at(measured++); });
  TrainingProgress progress;
  std::ostringstream log;
  budget.start(budget_config(3600, 400), progress, log);
  EXPECT_DOUBLE_EQ(budget.scale(), 1.0);
  sleep_ms(30);
  budget.remeasure(progress, log);
  ASSERT_EQ(progress.budget_sessions.size(), 2u);
  const BudgetSession& halved = progress.budget_sessions[1];
  EXPECT_GE(halved.started_at, 0.03);
  EXPECT_DOUBLE_EQ(halved.measured_gflops, 200);
  EXPECT_DOUBLE_EQ(halved.scale, 0.5);
  EXPECT_DOUBLE_EQ(budget.scale(), 0.5);
  EXPECT_NEAR(progress.budget_seconds, halved.started_at, 1e-9)
      << "the first stretch ran at scale 1";
  EXPECT_NE(log.str().find("now measures 200 GFLOP/s (was 400): a second here counts 0.500 s"),
            std::string::npos)
      << log.str();

  const double budget_then = progress.budget_seconds;
  sleep_ms(40);
  budget.update(progress);
  EXPECT_NEAR(progress.budget_seconds - budget_then,
              (progress.wall_seconds - halved.started_at) * 0.5, 1e-9);
  const std::string logged = log.str();
  budget.remeasure(progress, log);
  EXPECT_EQ(progress.budget_sessions.size(), 3u);
  EXPECT_EQ(log.str(), logged) << "a steady machine logs nothing";

  // Without a reference, remeasuring only brings the clock up to now.
  TimeBudget wall_clock([&]() -> double {
    ADD_FAILURE() << "measured without a reference";
    return 1;
  });
  TrainingProgress plain;
  wall_clock.start(budget_config(3600, 0), plain, log);
  sleep_ms(10);
  wall_clock.remeasure(plain, log);
  EXPECT_TRUE(plain.budget_sessions.empty());
  EXPECT_GE(plain.wall_seconds, 0.01);
  EXPECT_DOUBLE_EQ(plain.budget_seconds, plain.wall_seconds);
}

TEST(TimeBudget, ARunStopsOnTheScaledBudgetAndAResumeAddsASession) {
  // A reference of 0.001 GFLOP/s makes a second here worth days of it: one update exhausts a
  // 60-second budget.
  testing::TinyRun run("transformer", {"training.max_time=60s", "training.reference_gflops=0.001",
                                       "training.valid_every=0", "training.valid_bleu=false",
                                       "training.best_metric=loss"});
  std::ostringstream log;
  TrainResult first = Trainer(run.config(), false, log).train();
  EXPECT_EQ(first.progress.step, 1);
  EXPECT_GE(first.progress.budget_seconds, 60);
  EXPECT_LT(first.progress.wall_seconds, 60);
  EXPECT_NE(first.stop_reason.find("of the reference machine"), std::string::npos)
      << first.stop_reason;
  // One session from the start and one from the end-of-training validation's measurement.
  ASSERT_EQ(first.progress.budget_sessions.size(), 2u);

  RunConfig longer = run.config();
  apply_overrides(longer, {"training.max_time=1000000h"});
  apply_overrides(longer, {"training.max_steps=3"});
  TrainResult second = Trainer(longer, true, log).train();
  EXPECT_EQ(second.progress.step, 3);
  ASSERT_EQ(second.progress.budget_sessions.size(), 4u);
  EXPECT_DOUBLE_EQ(second.progress.budget_sessions[0].measured_gflops,
                   first.progress.budget_sessions[0].measured_gflops);
  EXPECT_GT(second.progress.budget_seconds, first.progress.budget_seconds);
  const CheckpointInfo saved =
      read_checkpoint_info(longer.training.output_dir + "/checkpoints/checkpoint_last.pt");
  EXPECT_EQ(saved.progress.budget_sessions.size(), 4u);
  EXPECT_DOUBLE_EQ(saved.progress.budget_seconds, second.progress.budget_seconds);
}

}  // namespace
}  // namespace nmtzoo
