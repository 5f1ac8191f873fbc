// SPDX-License-Identifier: MIT
#include "libtorch/train/weight_ema.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/training_data.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

std::vector<at::Tensor> snapshot(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> copies;
  for (const auto& p : parameters) copies.push_back(p.detach().clone());
  return copies;
}

TEST(WeightEma, DecayIsWarmedUpThenCapped) {
  EXPECT_DOUBLE_EQ(WeightEma::decay_at(0.999, 1), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(WeightEma::decay_at(0.999, 90), 91.0 / 100.0);
  EXPECT_DOUBLE_EQ(WeightEma::decay_at(0.999, 100000), 0.999);
}

TEST(WeightEma, AveragesUpdatesAndSwapsTheAverageInAndOut) {
  torch::Tensor w = torch::zeros({3});
  WeightEma ema({w}, 0.5);
  w.fill_(10);
  ema.update(1);  // d = min(0.5, 2/11): 2/11 * 0 + 9/11 * 10
  EXPECT_TRUE(torch::allclose(ema.average()[0], torch::full({3}, 90.0 / 11.0)));
  w.fill_(20);
  ema.update(100);  // d = 0.5
  const double expected = 0.5 * 90.0 / 11.0 + 0.5 * 20;
  EXPECT_TRUE(torch::allclose(ema.average()[0], torch::full({3}, expected)));
  {
    WeightEma::Swap averaged(&ema);
    EXPECT_TRUE(torch::allclose(w, torch::full({3}, expected)))
        << "the parameters hold the average";
  }
  EXPECT_TRUE(torch::equal(w, torch::full({3}, 20.0))) << "and the training weights come back";
  EXPECT_TRUE(torch::allclose(ema.average()[0], torch::full({3}, expected)));
}

// With training.ema_decay, a checkpoint's model weights are the average (what translation
// loads), its training weights what the engine trains, and a restored engine has both back.
TEST(WeightEma, CheckpointsHoldTheAverageAsTheModelAndTheTrainingWeightsBeside) {
  testing::TinyRun run("transformer", {"training.ema_decay=0.9", "training.valid_bleu=false",
                                       "training.best_metric=loss", "training.max_tokens=200"});
  std::ostringstream log;
  TrainingData data = prepare_training_data(run.config(), log);
  TrainingEngine engine(run.config(), data, torch::kCPU, nullptr, log);
  auto initial = snapshot(engine.model().parameters());
  auto batches = epoch_batches(data, 200, 1, 0);
  engine.train_step({batches[0]});
  auto trained = snapshot(engine.model().parameters());
  const std::string path = run.path("ema.pt");
  engine.save_checkpoint(path);
  auto after_save = engine.model().parameters();
  for (size_t i = 0; i < trained.size(); ++i) ASSERT_TRUE(torch::equal(after_save[i], trained[i]));

  TrainedModel loaded = load_trained_model(path, torch::kCPU);
  auto averaged = loaded.model->parameters();
  const double d = 2.0 / 11.0;
  bool any_moved = false;
  for (size_t i = 0; i < trained.size(); ++i) {
    EXPECT_TRUE(torch::allclose(averaged[i], d * initial[i] + (1 - d) * trained[i], 1e-5, 1e-6));
    any_moved = any_moved || !torch::equal(trained[i], initial[i]);
  }
  EXPECT_TRUE(any_moved);

  TrainingEngine restored(run.config(), data, torch::kCPU, nullptr, log);
  restored.restore_checkpoint(path);
  auto resumed = restored.model().parameters();
  for (size_t i = 0; i < trained.size(); ++i) EXPECT_TRUE(torch::equal(resumed[i], trained[i]));
  const ValidationResult a = engine.validate();
  const ValidationResult b = restored.validate();
  EXPECT_DOUBLE_EQ(a.loss, b.loss) << "both validate the same average";
  for (size_t i = 0; i < trained.size(); ++i)
    EXPECT_TRUE(torch::equal(restored.model().parameters()[i], trained[i]));
}

}  // namespace
}  // namespace nmtzoo
