#include "core/train/time_budget.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "core/config/loader.h"
#include "core/runtime/checkpoint.h"
#include "core/runtime/matmul_ceiling.h"
#include "core/train/trainer.h"
#include "tests/support/tiny_run.h"

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

// A reference machine a tenth as fast as this one: each second here is ~10 of the budget, and
// the session (with the ceiling it measured) is recorded after the earlier ones.
TEST(TimeBudget, AReferenceScalesTheRemainingBudgetByTheRatioOfCeilings) {
  TrainingProgress progress;
  progress.wall_seconds = 100;
  progress.budget_seconds = 80;
  progress.budget_sessions.push_back({0, 400, 0.8});
  std::ostringstream log;
  TimeBudget budget;
  MatmulCeiling here;
  here.measure();
  budget.start(budget_config(3600, here.best() / 10), progress, log);
  ASSERT_EQ(progress.budget_sessions.size(), 2u);
  const BudgetSession& session = progress.budget_sessions.back();
  EXPECT_DOUBLE_EQ(session.started_at, 100);
  EXPECT_GT(session.measured_gflops, 0);
  EXPECT_DOUBLE_EQ(session.scale, budget.scale());
  // The two measurements of one machine agree within its drift.
  EXPECT_GT(budget.scale(), 10 * 0.6);
  EXPECT_LT(budget.scale(), 10 / 0.6);
  EXPECT_NE(log.str().find("training.reference_gflops"), std::string::npos) << log.str();
  sleep_ms(50);
  budget.update(progress);
  const double session_wall = progress.wall_seconds - 100;
  EXPECT_GE(session_wall, 0.05);
  EXPECT_NEAR(progress.budget_seconds - 80, session_wall * budget.scale(), 1e-9);
  EXPECT_FALSE(budget.exhausted(progress));
  EXPECT_NEAR(budget.fraction(progress), progress.budget_seconds / 3600, 1e-12);
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
  ASSERT_EQ(first.progress.budget_sessions.size(), 1u);

  RunConfig longer = run.config();
  apply_overrides(longer, {"training.max_time=1000000h"});
  apply_overrides(longer, {"training.max_steps=3"});
  TrainResult second = Trainer(longer, true, log).train();
  EXPECT_EQ(second.progress.step, 3);
  ASSERT_EQ(second.progress.budget_sessions.size(), 2u);
  EXPECT_DOUBLE_EQ(second.progress.budget_sessions[0].measured_gflops,
                   first.progress.budget_sessions[0].measured_gflops);
  EXPECT_GT(second.progress.budget_seconds, first.progress.budget_seconds);
  const CheckpointInfo saved =
      read_checkpoint_info(longer.training.output_dir + "/checkpoints/checkpoint_last.pt");
  EXPECT_EQ(saved.progress.budget_sessions.size(), 2u);
  EXPECT_DOUBLE_EQ(saved.progress.budget_seconds, second.progress.budget_seconds);
}

}  // namespace
}  // namespace nmtzoo
