// SPDX-License-Identifier: MIT
#include "torch_free/config/experiment_plan.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

// A scratch project: Multi30k-named files for de, en and fr (fr without test_2017_flickr), and
// two model configs reading them.
class ExperimentPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string split : {"train", "val", "test_2016_flickr", "test_2017_flickr"}) {
      for (const std::string lang : {"de", "en", "fr"}) {
        if (split == "test_2017_flickr" && lang == "fr") continue;
        testing::write_gzip(dir_.path(split + "." + lang + ".gz"), "a\nb\n");
      }
    }
    for (const std::string model : {"transformer", "rnn"}) {
      testing::write_text(dir_.path(model + ".yaml"),
                          "data:\n  dir: " + dir_.path() +
                              "\n  test: [test_2016_flickr]\nmodel:\n  arch: " +
                              (model == "rnn" ? "rnn_bahdanau_small" : "transformer_small") + "\n");
    }
  }

  std::string write_plan(const std::string& body) {
    const std::string path = dir_.path("plan.yaml");
    testing::write_text(path, "tokenizer_prefix: runs/spm_{languages}\nmodels:\n  transformer: " +
                                  dir_.path("transformer.yaml") +
                                  "\n  rnn: " + dir_.path("rnn.yaml") + "\n" + body);
    return path;
  }

  // The problems of loading a plan with `body` after its models, with the folder's path cut.
  std::string errors(const std::string& body) {
    try {
      load_plan(write_plan(body));
    } catch (const ConfigError& e) {
      std::string text = e.what();
      const std::string folder = dir_.path() + "/";
      for (size_t at; (at = text.find(folder)) != std::string::npos;) text.erase(at, folder.size());
      return text;
    }
    return "";
  }

  TempDir dir_;
};

TEST_F(ExperimentPlanTest, ReadsDirectionsWithTheirOwnSettings) {
  const ExperimentPlan plan =
      load_plan(write_plan("title: t\nbudget: 30m\nseeds: 2\nresamples: 10000\ntests: "
                           "[test_2016_flickr]\nensemble: [transformer, rnn]\nbaseline: rnn\n"
                           "directions:\n  - de-en: {seeds: 3, budget: 60m}\n  - en-fr: {set: "
                           "{rnn: [model.dropout=0.4]}}\n"));
  ASSERT_EQ(plan.directions.size(), 2u);
  EXPECT_EQ(plan.name, "plan");
  EXPECT_EQ(plan.baseline, "rnn");
  EXPECT_EQ(plan.correction, "holm");
  EXPECT_EQ(plan.resamples, 10000);
  EXPECT_EQ(plan.directions[0].pair(), "de_en");
  EXPECT_EQ(plan.directions[0].seeds, 3);
  EXPECT_EQ(plan.directions[0].budget, "60m");
  EXPECT_EQ(plan.directions[1].seeds, 2);
  EXPECT_EQ(plan.directions[1].budget, "30m");
  EXPECT_EQ(run_overrides(plan, plan.directions[1], "rnn"),
            (std::vector<std::string>{
                "data.src_lang=en", "data.tgt_lang=fr", "data.test=[test_2016_flickr]",
                "tokenizer.prefix=runs/spm_en_fr", "training.max_time=30m", "model.dropout=0.4"}));
  EXPECT_EQ(run_overrides(plan, plan.directions[1], "transformer").size(), 5u);
  // de-en and en-de share a tokenizer: {languages} is the pair sorted.
  EXPECT_EQ(run_overrides(plan, plan.directions[0], "rnn")[3], "tokenizer.prefix=runs/spm_de_en");
  EXPECT_EQ(seed_folder("rnn", 1), "rnn");
  EXPECT_EQ(seed_folder("rnn", 3), "rnn_seed3");
  EXPECT_EQ(load_config(plan.models[1].config, run_overrides(plan, plan.directions[1], "rnn"))
                .data.tgt_lang,
            "fr");
}

TEST_F(ExperimentPlanTest, ErrorsNameTheLineAndTheKey) {
  EXPECT_EQ(errors("seed: 2\ndirections: [de-en]\n"),
            "plan.yaml:5: seed: unknown key 'seed'; did you mean 'seeds'?");
  EXPECT_EQ(errors("seeds: 0\ndirections: [de-en]\n"),
            "plan.yaml:5: seeds: expects a positive integer");
  EXPECT_NE(
      errors("budget: soon\ndirections: [de-en]\n").find("plan.yaml:5: budget: is not a duration"),
      std::string::npos);
  EXPECT_EQ(errors("directions: [de-en, de]\n"),
            "plan.yaml:5: directions[2]: 'de' is not a pair of two language codes like de-en");
  EXPECT_EQ(errors("directions: [de-en, de-en]\n"),
            "plan.yaml:5: directions[2]: 'de-en' is listed twice");
  EXPECT_EQ(errors("directions:\n  - de-en: {seed: 3}\n"),
            "plan.yaml:6: directions[1] de-en.seed: unknown key 'seed'; did you mean 'seeds'?");
  EXPECT_EQ(errors("baseline: lstm\ndirections: [de-en]\n"),
            "plan.yaml:5: baseline: 'lstm' is not one of the plan's models");
  EXPECT_EQ(errors("ensemble: [transformer, gru]\ndirections: [de-en]\n"),
            "plan.yaml:5: ensemble: 'gru' is not one of the plan's models");
  EXPECT_EQ(errors("correction: fdr\ndirections: [de-en]\n"),
            "plan.yaml:5: correction: 'fdr' is not one of holm, bonferroni, none");
  EXPECT_EQ(errors("resamples: 0\ndirections: [de-en]\n"),
            "plan.yaml:5: resamples: expects a positive integer");
  EXPECT_EQ(errors("resample: 9\ndirections: [de-en]\n"),
            "plan.yaml:5: resample: unknown key 'resample'; did you mean 'resamples'?");
  EXPECT_EQ(errors(""),
            "plan.yaml:1: directions: is required: a list of pairs such as [de-en, en-de]");
  EXPECT_EQ(errors("directions:\n  - en-de: {set: {lstm: [model.dropout=0.4]}}\n"),
            "plan.yaml:6: directions[1] en-de.set: 'lstm' is not one of the plan's models");
}

// A plan is someone else's input (the fourth hostile sweep): a TAB in a set value became extra
// arguments of compare.sh (another binary ran), names with '/', spaces or tabs wrote outside
// reports/plans, and 10^12 seeds kept `nmtzoo-plan status` busy for minutes.
TEST_F(ExperimentPlanTest, NamesValuesAndCountsFromAPlanAreChecked) {
  EXPECT_EQ(errors("directions:\n  - de-en: {set: {rnn: "
                   "[\"tokenizer.prefix=x\\t--frozen-bin\\t/tmp/evil\"]}}\n"),
            "plan.yaml:6: directions[1] de-en.set.rnn: 'tokenizer.prefix=x' holds a control "
            "character (byte 19, "
            "code 9): a plan's texts are one line without TABs");
  EXPECT_EQ(errors("name: ../../../../X\ndirections: [de-en]\n"),
            "plan.yaml:5: name: '../../../../X' is not a name: use letters, digits, '.', '_' and "
            "'-' (not first), at most 100");
  EXPECT_NE(errors("name: \"a b\"\ndirections: [de-en]\n").find("'a b' is not a name"),
            std::string::npos);
  EXPECT_NE(errors("tests: [../../etc/passwd]\ndirections: [de-en]\n")
                .find("tests: '../../etc/passwd' is not a name"),
            std::string::npos);
  EXPECT_EQ(errors("seeds: 1000000000000\ndirections: [de-en]\n"),
            "plan.yaml:5: seeds: 1000000000000 is over the limit of 100");
  EXPECT_EQ(errors("directions:\n  - de-en: {seeds: 101}\n"),
            "plan.yaml:6: directions[1] de-en.seeds: 101 is over the limit of 100");
  const std::string path = dir_.path("bad_model_name.yaml");
  testing::write_text(path, "tokenizer_prefix: runs/spm_{languages}\nmodels:\n  \"../../x\": " +
                                dir_.path("rnn.yaml") + "\ndirections: [de-en]\n");
  try {
    load_plan(path);
    FAIL() << "a model named ../../x";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("models: '../../x' is not a name"), std::string::npos)
        << e.what();
  }
}

TEST_F(ExperimentPlanTest, AMultilingualSystemTrainsOnceForSeveralOfThePlansDirections) {
  const ExperimentPlan plan = load_plan(write_plan(
      "tests: [test_2016_flickr]\ndirections: [de-en, fr-en]\nmultilingual:\n"
      "  m2o: {model: rnn, directions: [de-en, fr-en], budget: 60m, set: [model.dropout=0.4]}\n"));
  ASSERT_EQ(plan.multilingual.size(), 1u);
  EXPECT_EQ(plan.resamples, 1000);  // sacreBLEU's --paired-bs-n
  const PlanMultilingual& system = plan.multilingual[0];
  EXPECT_EQ(system.run(), "runs/multi30k_m2o");
  EXPECT_EQ(system.directions[1].pair(), "fr_en");
  EXPECT_EQ(
      multilingual_overrides(plan, system),
      (std::vector<std::string>{"data.directions=[de-en, fr-en]", "data.test=[test_2016_flickr]",
                                "tokenizer.prefix=runs/spm_de_en_fr", "training.max_time=60m",
                                "model.dropout=0.4"}));
  const RunConfig config =
      load_config(plan.model("rnn").config, multilingual_overrides(plan, system));
  EXPECT_TRUE(config.multilingual());
  EXPECT_EQ(config.target_languages(), (std::vector<std::string>{"en"}));

  EXPECT_EQ(errors("tests: [test_2016_flickr]\ndirections: [de-en, fr-en]\nmultilingual:\n"
                   "  m: {model: gru, directions: [de-en, en-fr]}\n  rnn: {model: rnn, directions: "
                   "[de-en], sets: []}\n"),
            "plan.yaml:8: multilingual.m.model: 'gru' is not one of the plan's models\n"
            "plan.yaml:8: multilingual.m.directions: 'en-fr' is not one of the plan's directions "
            "(its bilingual models are the comparison)\n"
            "plan.yaml:9: multilingual.rnn: is also the name of a model\n"
            "plan.yaml:9: multilingual.rnn.sets: unknown key 'sets'; did you mean 'set'?\n"
            "plan.yaml:9: multilingual.rnn.directions: needs two directions or more");
}

TEST_F(ExperimentPlanTest, ChecksEveryConfigWithEachDirectionsOverrides) {
  EXPECT_EQ(errors("tests: [test_2016_flickr]\ndirections:\n  - de-en\n  - en-de: {set: {rnn: "
                   "[model.dropot=0.4]}}\n"),
            "plan.yaml:8: directions en-de models.rnn: --set model.dropot: unknown key "
            "'model.dropot'; did you mean 'model.dropout'?");
  testing::write_text(dir_.path("rnn.yaml"), "model:\n  arch: rnn_bahdanau_small\n  hidden: 3\n");
  EXPECT_NE(errors("tests: [test_2016_flickr]\ndirections: [de-en, en-de]\n")
                .find("plan.yaml:4: models.rnn: rnn.yaml:3: unknown key 'model.hidden'"),
            std::string::npos);
}

// Issue 85: a plan passed a config nmtzoo-train refuses (checkpoints chosen by BLEU, which is
// not computed), to fail hours later when that run's turn came.
TEST_F(ExperimentPlanTest, ARunConfigTheTrainerWouldRefuseIsRefusedByThePlan) {
  testing::write_text(dir_.path("rnn.yaml"),
                      "data:\n  dir: " + dir_.path() +
                          "\n  test: [test_2016_flickr]\nmodel:\n  arch: "
                          "rnn_bahdanau_small\ntraining:\n  valid_bleu: false\n");
  const std::string message = errors("tests: [test_2016_flickr]\ndirections: [de-en]\n");
  EXPECT_NE(
      message.find("directions de-en models.rnn: rnn.yaml: default: training.best_metric is bleu, "
                   "which needs valid_bleu: true"),
      std::string::npos)
      << message;
}

TEST_F(ExperimentPlanTest, ADirectionsMissingDataIsNamedBeforeAnythingRuns) {
  const std::string message =
      errors("tests: [test_2016_flickr, test_2017_flickr]\ndirections: [de-en, fr-en]\n");
  EXPECT_EQ(message,
            "plan.yaml:6: directions fr-en: the test set 'test_2017_flickr' has no fr file: "
            "test_2017_flickr.fr.gz (list the test sets it has with tests:)");
  EXPECT_EQ(errors("tests: [test_2016_flickr]\ndirections: [de-cs]\n")
                .find("plan.yaml:6: directions de-cs: the training corpus 'train' has no cs file"),
            0u);
}

// A run's speed for the status's ETA: the median over the log's last intervals, so one long pause
// (a stopped process) does not count; one record alone: its wall time per update; no file: zeros.
TEST(RunProgress, TheSpeedIsTheMedianOfTheLastIntervals) {
  TempDir dir;
  const std::string metrics = dir.path("metrics.jsonl");
  testing::write_text(metrics,
                      "{\"type\": \"train\", \"step\": 100, \"wall_seconds\": 300.0}\n"
                      "{\"type\": \"valid\", \"step\": 100, \"bleu\": 10.0}\n"
                      "{\"type\": \"train\", \"step\": 200, \"wall_seconds\": 550.0}\n"
                      "{\"type\": \"train\", \"step\": 300, \"wall_seconds\": 9550.0}\n"
                      "{\"type\": \"train\", \"step\": 400, \"wall_seconds\": 9800.0}\n");
  const RunProgress progress = last_progress(metrics);
  EXPECT_EQ(progress.step, 400);
  EXPECT_DOUBLE_EQ(progress.wall_seconds, 9800.0);
  EXPECT_DOUBLE_EQ(progress.seconds_per_update, 2.5);
  testing::write_text(metrics, "{\"type\": \"train\", \"step\": 10, \"wall_seconds\": 20.0}\n");
  EXPECT_DOUBLE_EQ(last_progress(metrics).seconds_per_update, 2.0);
  const RunProgress none = last_progress(dir.path("missing.jsonl"));
  EXPECT_EQ(none.step, 0);
  EXPECT_EQ(none.seconds_per_update, 0.0);
}

}  // namespace
}  // namespace nmtzoo
