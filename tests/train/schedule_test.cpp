// SPDX-License-Identifier: MIT
#include "libtorch/train/schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

TrainConfig training(const std::vector<std::string>& overrides) {
  RunConfig config = default_config();
  apply_overrides(config, overrides);
  return config.training;
}

TEST(LearningRateSchedule, InverseSqrtIsVaswanisFormulaByDefault) {
  LearningRateSchedule schedule(training({"training.warmup_steps=4000"}), 512);
  auto vaswani = [](double step) {
    return std::pow(512.0, -0.5) * std::min(std::pow(step, -0.5), step * std::pow(4000.0, -1.5));
  };
  for (int64_t step : {1, 100, 3999, 4000, 4001, 10000, 100000}) {
    EXPECT_NEAR(schedule.at(step), vaswani(static_cast<double>(step)), 1e-12) << step;
  }
  EXPECT_NEAR(schedule.at(4000), 0.000698771, 1e-9);  // the peak
}

TEST(LearningRateSchedule, InverseSqrtWithExplicitPeak) {
  LearningRateSchedule schedule(training({"training.lr=0.001", "training.warmup_steps=100"}), 512);
  EXPECT_DOUBLE_EQ(schedule.at(50), 0.0005);
  EXPECT_DOUBLE_EQ(schedule.at(100), 0.001);
  EXPECT_DOUBLE_EQ(schedule.at(400), 0.0005);
}

TEST(LearningRateSchedule, ConstantWarmsUpThenStays) {
  LearningRateSchedule schedule(
      training({"training.schedule=constant", "training.lr=0.002", "training.warmup_steps=10"}), 1);
  EXPECT_DOUBLE_EQ(schedule.at(5), 0.001);
  EXPECT_DOUBLE_EQ(schedule.at(10), 0.002);
  EXPECT_DOUBLE_EQ(schedule.at(1000000), 0.002);
}

TEST(LearningRateSchedule, PlateauAppliesTheDecayFactorAndFloor) {
  LearningRateSchedule schedule(training({"training.schedule=plateau", "training.lr=0.001",
                                          "training.warmup_steps=0", "training.min_lr=0.0002"}),
                                1);
  EXPECT_DOUBLE_EQ(schedule.at(50, 1.0), 0.001);
  EXPECT_DOUBLE_EQ(schedule.at(50, 0.5), 0.0005);
  EXPECT_DOUBLE_EQ(schedule.at(50, 0.125), 0.0002);
}

TEST(LearningRateSchedule, LinearAndCosineDecayToMinLrOverTheBudget) {
  const std::vector<std::string> common{"training.lr=0.002", "training.warmup_steps=0",
                                        "training.min_lr=0.0002", "training.max_steps=100"};
  auto with = [&](const std::string& schedule) {
    auto all = common;
    all.push_back("training.schedule=" + schedule);
    return LearningRateSchedule(training(all), 1);
  };
  const LearningRateSchedule linear = with("linear");
  const LearningRateSchedule cosine = with("cosine");
  for (const auto* schedule : {&linear, &cosine}) {
    EXPECT_DOUBLE_EQ(schedule->at(7, 1.0, 0.0), 0.002);
    EXPECT_DOUBLE_EQ(schedule->at(7, 1.0, 0.5), 0.0011);
    EXPECT_DOUBLE_EQ(schedule->at(7, 1.0, 1.0), 0.0002);
    EXPECT_DOUBLE_EQ(schedule->at(7, 1.0, 1.5), 0.0002) << "the fraction is clamped to the budget";
    EXPECT_DOUBLE_EQ(schedule->at(7, 0.5, 0.5), 0.0011) << "the plateau factor is not theirs";
  }
  EXPECT_DOUBLE_EQ(linear.at(7, 1.0, 0.25), 0.0002 + 0.0018 * 0.75);
  EXPECT_DOUBLE_EQ(cosine.at(7, 1.0, 0.25), 0.0002 + 0.0018 * (1 + std::sqrt(0.5)) / 2);
}

TEST(LearningRateSchedule, LinearWarmsUpWhileItDecays) {
  LearningRateSchedule schedule(training({"training.schedule=linear", "training.lr=0.002",
                                          "training.warmup_steps=10", "training.max_steps=100"}),
                                1);
  EXPECT_DOUBLE_EQ(schedule.at(5, 1.0, 0.04), 0.5 * 0.002 * 0.96);
  EXPECT_DOUBLE_EQ(schedule.at(10, 1.0, 0.09), 0.002 * 0.91);
}

TEST(LearningRateSchedule, ConstantNeedsAnExplicitRate) {
  EXPECT_THROW(LearningRateSchedule(training({"training.schedule=constant"}), 512),
               std::runtime_error);
}

}  // namespace
}  // namespace nmtzoo
