// SPDX-License-Identifier: MIT
// nmtzoo-report as experiments/compare.sh runs it: everything comes from the per-model folders.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

// Source lengths 4, 7 and 12 words: buckets "1-5", "6-10" and "11-15".
constexpr char kSources[] =
    "ein Hund läuft schnell\n"
    "zwei Männer stehen vor einem roten Auto\n"
    "eine Frau mit einem Hut sitzt auf einer Bank in einem Park\n";
constexpr char kReferences[] =
    "a dog runs fast\n"
    "two men stand in front of a red car\n"
    "a woman with a hat sits on a bench in a park\n";

class ReportApp : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.path("data"));
    testing::write_gzip(dir_.path("data/test.de.gz"), kSources);
    testing::write_gzip(dir_.path("data/test.en.gz"), kReferences);
  }

  // A complete model folder, as experiments/compare.sh leaves it.
  static constexpr char kSummary[] =
      R"({"arch": "rnn_luong", "parameters": 7170000, "updates": 2400,
                                          "wall_seconds": 3600.0, "target_tokens_per_second": 2100.4})";

  void add_model(const std::string& name, const std::string& hypotheses, double bleu,
                 const std::string& summary = kSummary) {
    const std::string dir = dir_.path("report/" + name);
    std::filesystem::create_directories(dir);
    testing::write_text(dir + "/training_summary.json", summary);
    testing::write_text(
        dir + "/metrics.jsonl",
        "{\"type\": \"train\", \"step\": 100, \"loss\": 5.5}\n"
        "{\"type\": \"valid\", \"step\": 500, \"wall_seconds\": 300.0, \"bleu\": 20.0}\n"
        "{\"type\": \"train\", \"step\": 600, \"loss\": 3.5}\n");
    testing::write_text(dir + "/test.hyp", hypotheses);
    testing::write_text(dir + "/test.scores.json",
                        "[{\"name\": \"BLEU\", \"score\": " + std::to_string(bleu) +
                            "}, {\"name\": \"chrF2\", \"score\": 61.5}, {\"name\": \"TER\", "
                            "\"score\": 20.25}]");
    testing::write_text(dir + "/test.speed.json", R"({"sentences_per_second": 120.5})");
  }

  int report(const std::vector<std::string>& models, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> command{testing::bin("nmtzoo-report"),
                                     "--out",
                                     dir_.path("report"),
                                     "--tests",
                                     "test",
                                     "--data",
                                     dir_.path("data"),
                                     "--models"};
    command.insert(command.end(), models.begin(), models.end());
    command.insert(command.end(), extra.begin(), extra.end());
    return testing::run(command, "", dir_.path("out.txt"), dir_.path("err.txt"));
  }
  std::string file(const std::string& name) const { return testing::read_text(dir_.path(name)); }
  std::string err() const { return file("err.txt"); }

  // "perfect" repeats the references; "partial" gets one of the three sentences wrong.
  void add_perfect_and_partial_models() {
    add_model("perfect", kReferences, 100.0);
    add_model("partial",
              "a dog runs fast\n"
              "completely different words here now\n"
              "a woman with a hat sits on a bench in a park\n",
              55.25);
  }

  testing::TempDir dir_;
};

TEST_F(ReportApp, TablesComeFromTheModelFoldersAndBleuByLengthFromTheHypotheses) {
  add_perfect_and_partial_models();
  ASSERT_EQ(report({"perfect", "partial"}), 0) << err();

  EXPECT_EQ(file("report/results.csv"),
            "model,arch,parameters,updates,train_minutes,train_wall_minutes,"
            "train_tgt_tokens_per_second,test_bleu,test_chrf2,test_ter,test_sentences_per_second\n"
            "perfect,rnn_luong,7170000,2400,60.00,60.00,2100,100.00,61.50,20.25,120.50\n"
            "partial,rnn_luong,7170000,2400,60.00,60.00,2100,55.25,61.50,20.25,120.50\n");
  const std::string markdown = file("report/results.md");
  EXPECT_NE(markdown.find("| perfect | rnn_luong | 7.17M | 2400 | 60.0 min | 2100 | 100.00 | 61.50 "
                          "| 20.25 | 120.5 |"),
            std::string::npos)
      << markdown;
  // One sentence per bucket, each scored alone; empty buckets show "-".
  EXPECT_NE(markdown.find("| source words | 1-5 (1 sent.) | 6-10 (1 sent.) | 11-15 (1 sent.) | "
                          "16-20 (0 sent.) |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| perfect | 100.00 | 100.00 | 100.00 | - | - | - | - |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| partial | 100.00 | 0.00 | 100.00 | - | - | - | - |"),
            std::string::npos)
      << markdown;
  for (const char* plot :
       {"valid_bleu_vs_time.svg", "train_loss_vs_step.svg", "bleu_by_length.svg"}) {
    EXPECT_NE(file(std::string("report/") + plot).find("<svg"), std::string::npos) << plot;
  }
}

TEST_F(ReportApp, TrainingTimeIsTheBudgetOfTheReferenceMachineWithWallClockBeside) {
  // 1,000 s at half the reference ceiling, then (resumed elsewhere) 2,000 s at 1.2 times it:
  // 500 + 2,400 = 2,900 s of budget (48.3 min) in 50 wall-clock minutes.
  const std::string summary = R"({"arch": "transformer", "parameters": 7600000, "updates": 8000,
      "wall_seconds": 3000.0, "budget_seconds": 2900.0, "target_tokens_per_second": 7000.0,
      "budget_sessions": [{"started_at_wall_seconds": 0.0, "measured_gflops": 250.0, "scale": 0.5},
                          {"started_at_wall_seconds": 1000.0, "measured_gflops": 600.0, "scale": 1.2}]})";
  add_model("resumed", kReferences, 100.0, summary);
  add_model("same_machine", kReferences, 100.0);
  ASSERT_EQ(report({"resumed", "same_machine"}, {"--samples", "10"}), 0) << err();
  const std::string markdown = file("report/results.md");
  EXPECT_NE(markdown.find("| resumed | transformer | 7.60M | 8000 | 48.3 min (50.0 here) | 7000 |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| same_machine | rnn_luong | 7.17M | 2400 | 60.0 min | 2100 |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(file("report/results.csv").find("\nresumed,transformer,7600000,8000,48.33,50.00,7000,"),
            std::string::npos);

  // Sessions that do not add up to the recorded budget: the file is not what the trainer wrote.
  std::string wrong = summary;
  wrong.replace(wrong.find("2900.0"), 6, "3000.0");
  add_model("resumed", kReferences, 100.0, wrong);
  EXPECT_EQ(report({"resumed", "same_machine"}, {"--samples", "10"}), 1);
  EXPECT_NE(
      err().find("resumed/training_summary.json: budget_sessions add up to 2900.0 s of budget "
                 "at wall_seconds, but budget_seconds says 3000.0"),
      std::string::npos)
      << err();
}

TEST_F(ReportApp, ModelsAreTestedAgainstTheBaselineWithIntervalsAndPValues) {
  add_perfect_and_partial_models();
  ASSERT_EQ(report({"perfect", "partial"}, {"--samples", "200"}), 0) << err();
  const std::string markdown = file("report/results.md");
  // The first model is the baseline when there is no "transformer"; scores are computed from the
  // hypotheses (a perfect system: BLEU 100, TER 0, interval width 0).
  EXPECT_NE(markdown.find("## Significance against perfect"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("makes 3 comparisons (1 model × 3 metrics × 1 test set against perfect)"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| perfect (baseline) | 100.00 (100.00 ± 0.00) | - |"), std::string::npos)
      << markdown;
  const auto numbers = nlohmann::json::parse(file("report/significance.json"));
  EXPECT_EQ(numbers.at("baseline"), "perfect");
  EXPECT_EQ(numbers.at("samples"), 200);
  const auto& partial = numbers.at("test").at("partial");
  for (const char* metric : {"BLEU", "chrF2", "TER"}) {
    const double p = partial.at(metric).at("p_value").get<double>();
    EXPECT_GT(p, 0.0) << metric;
    EXPECT_LE(p, 1.0) << metric;
  }
  EXPECT_LT(partial.at("BLEU").at("score").get<double>(), 100.0);
  EXPECT_GT(partial.at("TER").at("score").get<double>(), 0.0);
  EXPECT_EQ(numbers.at("signatures").at(0).get<std::string>().substr(0, 26),
            "nrefs:1|bs:200|seed:12345|");

  ASSERT_EQ(report({"perfect", "partial"}, {"--baseline", "partial"}), 0) << err();
  EXPECT_NE(file("report/results.md").find("| partial (baseline) |"), std::string::npos);
  EXPECT_EQ(report({"perfect", "partial"}, {"--baseline", "absent"}), 1);
  EXPECT_NE(err().find("--baseline 'absent' is not one of --models"), std::string::npos) << err();
}

TEST_F(ReportApp, SeedsAreSummarisedByMeanAndStandardDeviationBesideSeedOnesSignificance) {
  add_perfect_and_partial_models();
  add_model("perfect_seed2", kReferences, 100.0);
  add_model("partial_seed2", kReferences, 57.25);
  ASSERT_EQ(report({"perfect", "partial"}, {"--seeds", "2", "--samples", "100"}), 0) << err();
  const std::string markdown = file("report/results.md");
  EXPECT_NE(markdown.find("## Variation over 2 seeds"), std::string::npos) << markdown;
  // BLEU 55.25 and 57.25: mean 56.25, sample standard deviation sqrt(2) = 1.41.
  EXPECT_NE(
      markdown.find("| partial | 55.25 / 57.25 → **56.25 ± 1.41** | 61.50 / 61.50 → **61.50 ± "
                    "0.00** | 20.25 / 20.25 → **20.25 ± 0.00** |"),
      std::string::npos)
      << markdown;
  // The significance section still compares seed 1's outputs (partial's has one wrong sentence).
  EXPECT_NE(markdown.find("## Significance against perfect"), std::string::npos);
  const auto numbers = nlohmann::json::parse(file("report/significance.json"));
  EXPECT_LT(numbers.at("test").at("partial").at("BLEU").at("score").get<double>(), 100.0);
  EXPECT_NE(file("report/seeds.csv")
                .find("model,test,metric,seed1,seed2,mean,sd\n"
                      "perfect,test,BLEU,100.00,100.00,100.000,0.000\n"),
            std::string::npos)
      << file("report/seeds.csv");
  EXPECT_NE(file("report/seeds.csv").find("partial,test,BLEU,55.25,57.25,56.250,1.414\n"),
            std::string::npos);

  EXPECT_EQ(report({"perfect", "partial"}, {"--seeds", "3"}), 1);
  EXPECT_NE(err().find("perfect_seed3/training_summary.json"), std::string::npos) << err();
}

TEST_F(ReportApp, AScoresFileWithoutTerNamesTheFile) {
  add_model("luong", kReferences, 100.0);
  testing::write_text(dir_.path("report/luong/test.scores.json"),
                      R"([{"name": "BLEU", "score": 1.0}, {"name": "chrF2", "score": 2.0}])");
  EXPECT_EQ(report({"luong"}), 1);
  EXPECT_NE(err().find("luong/test.scores.json: has no TER score"), std::string::npos) << err();
}

TEST_F(ReportApp, AMissingSummaryKeyNamesTheFileAndTheKey) {
  add_model("luong", kReferences, 100.0);
  testing::write_text(dir_.path("report/luong/training_summary.json"), R"({"arch": "rnn_luong"})");
  EXPECT_EQ(report({"luong"}), 1);
  EXPECT_NE(err().find("luong/training_summary.json: missing key 'parameters'"), std::string::npos)
      << err();
  EXPECT_FALSE(std::filesystem::exists(dir_.path("report/results.md")));
}

TEST_F(ReportApp, HypothesesOfTheWrongLengthAreAnErrorNamingTheFile) {
  add_model("luong", "a dog runs fast\n", 100.0);
  EXPECT_EQ(report({"luong"}), 1);
  EXPECT_NE(err().find("luong/test.hyp has 1 lines, the test set test has 3"), std::string::npos)
      << err();
}

TEST_F(ReportApp, ABrokenMetricsLineIsAnErrorNamingFileAndLine) {
  add_model("luong", kReferences, 100.0);
  testing::write_text(dir_.path("report/luong/metrics.jsonl"),
                      "{\"type\": \"train\", \"step\": 100, \"loss\": 5.5}\n{\"type\": \"tra\n");
  EXPECT_EQ(report({"luong"}), 1);
  EXPECT_NE(err().find("luong/metrics.jsonl:2: not valid JSON"), std::string::npos) << err();
}

TEST_F(ReportApp, AModelWithoutAFolderIsAnError) {
  EXPECT_EQ(report({"absent"}), 1);
  EXPECT_NE(err().find("cannot read"), std::string::npos) << err();
  EXPECT_NE(err().find("absent/training_summary.json"), std::string::npos) << err();
}

}  // namespace
}  // namespace nmtzoo
