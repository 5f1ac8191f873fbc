// SPDX-License-Identifier: MIT
// sacreBLEU's statistical tests: the seed rules, the signature fields and properties any correct
// paired test has. The numbers themselves are pinned against sacreBLEU 2.6.0's own output in
// tests/apps/evaluate_significance_test.cpp (goldens from scripts/make_significance_goldens.py).
#include <gtest/gtest.h>

#include <cmath>

#include "torch_free/metrics/significance.h"

namespace nmtzoo {
namespace {

TEST(SacrebleuSeed, ParsesAsPythonsIntAndKeepsTheTextForTheSignature) {
  EXPECT_EQ(SacrebleuSeed::parse("12345").value, 12345u);
  EXPECT_EQ(SacrebleuSeed::parse(" 7 ").value, 7u);
  EXPECT_EQ(SacrebleuSeed::parse("+1_000").value, 1000u);
  EXPECT_EQ(SacrebleuSeed::parse("18446744073709551615").value, UINT64_MAX);
  EXPECT_FALSE(SacrebleuSeed::parse("None").value.has_value());
  EXPECT_EQ(SacrebleuSeed::parse("None").text, "none");
  EXPECT_EQ(SacrebleuSeed::parse("0012").text, "0012");         // --confidence's signature
  EXPECT_EQ(SacrebleuSeed::parse("0012").paired_text(), "12");  // str(int(seed))
  EXPECT_EQ(SacrebleuSeed::parse("none").paired_text(), "none");
  EXPECT_FALSE(SacrebleuSeed::parse("0").paired_seed().has_value());  // `seed if seed else None`
  EXPECT_EQ(SacrebleuSeed::parse("0").paired_text(), "0");
  for (const char* bad : {"-1", "abc", "", "1__0", "_1", "18446744073709551616", "1.5"}) {
    EXPECT_THROW(SacrebleuSeed::parse(bad), MetricError) << bad;
  }
}

TEST(Significance, TestFieldsGoAfterNrefsInSacrebleusOrder) {
  EXPECT_EQ(signature_with_test_fields("nrefs:1|case:mixed|version:2.6.0+nmtzoo",
                                       {{"bs", "1000"}, {"seed", "12345"}}, false),
            "nrefs:1|bs:1000|seed:12345|case:mixed|version:2.6.0+nmtzoo");
  EXPECT_EQ(signature_with_test_fields("#:1|c:mixed|v:2.6.0+nmtzoo",
                                       {{"ar", "10"}, {"seed", "none"}}, true),
            "#:1|ar:10|rs:none|c:mixed|v:2.6.0+nmtzoo");
}

class PairedTestProperties : public ::testing::Test {
 protected:
  PairedTestProperties() {
    for (int i = 0; i < 60; ++i) {
      references_[0].push_back("a small dog runs on the green grass number " + std::to_string(i));
      baseline_.push_back(i % 3 == 0 ? "a dog runs on grass " + std::to_string(i)
                                     : references_[0].back());
      other_.push_back(i % 2 == 0 ? "the cat sleeps" : references_[0].back());
    }
    metrics_.push_back(make_resampled_metric(BleuOptions{}));
    metrics_.push_back(make_resampled_metric(ChrfOptions{}));
    metrics_.push_back(make_resampled_metric(TerOptions{}));
    for (const auto& metric : metrics_) pointers_.push_back(metric.get());
  }
  PairedTestReport run(PairedTestKind kind, const std::vector<std::vector<std::string>>& systems,
                       const std::string& seed = "12345", int threads = 2) {
    PairedTestOptions options;
    options.kind = kind;
    options.samples = kind == PairedTestKind::kBootstrap ? 200 : 500;
    options.seed = SacrebleuSeed::parse(seed);
    options.threads = threads;
    return paired_test(systems, references_, pointers_, options);
  }
  ReferenceStreams references_{1};
  std::vector<std::string> baseline_;
  std::vector<std::string> other_;
  std::vector<std::unique_ptr<ResampledMetric>> metrics_;
  std::vector<const ResampledMetric*> pointers_;
};

TEST_F(PairedTestProperties, ASystemAgainstItselfHasTheLargestPValue) {
  for (auto kind : {PairedTestKind::kBootstrap, PairedTestKind::kApproximateRandomization}) {
    PairedTestReport report = run(kind, {baseline_, baseline_});
    const double expected = 1.0 / static_cast<double>(report.samples + 1);  // no statistic > 0
    for (size_t m = 0; m < 3; ++m) {
      EXPECT_EQ(report.results[1][m].p_value, expected) << report.metric_names[m];
      EXPECT_EQ(report.results[1][m].score, report.results[0][m].score);
    }
  }
}

TEST_F(PairedTestProperties, AClearlyWorseSystemIsSignificantAndScoresAreCorpusScores) {
  PairedTestReport bootstrap = run(PairedTestKind::kBootstrap, {baseline_, other_});
  PairedTestReport randomization =
      run(PairedTestKind::kApproximateRandomization, {baseline_, other_});
  EXPECT_EQ(bootstrap.metric_names, (std::vector<std::string>{"BLEU", "chrF2", "TER"}));
  EXPECT_DOUBLE_EQ(bootstrap.results[0][0].score,
                   Bleu().corpus_score(baseline_, references_).score);
  EXPECT_DOUBLE_EQ(bootstrap.results[1][1].score, Chrf().corpus_score(other_, references_).score);
  EXPECT_DOUBLE_EQ(bootstrap.results[1][2].score, Ter().corpus_score(other_, references_).score);
  for (size_t m = 0; m < 3; ++m) {
    EXPECT_LT(*bootstrap.results[1][m].p_value, 0.05) << m;
    EXPECT_LT(*randomization.results[1][m].p_value, 0.05) << m;
    ASSERT_TRUE(bootstrap.results[0][m].mean.has_value());
    EXPECT_NEAR(*bootstrap.results[0][m].mean, bootstrap.results[0][m].score, 3.0);
    EXPECT_GT(*bootstrap.results[0][m].ci, 0.0);
    EXPECT_FALSE(randomization.results[0][m].mean.has_value());  // no interval with AR
  }
  EXPECT_EQ(bootstrap.signatures[0].substr(0, 27), "nrefs:1|bs:200|seed:12345|c");
  EXPECT_EQ(randomization.signatures[2].substr(0, 27), "nrefs:1|ar:500|seed:12345|c");
}

TEST_F(PairedTestProperties, ThreadsDoNotChangeAnyNumber) {
  for (auto kind : {PairedTestKind::kBootstrap, PairedTestKind::kApproximateRandomization}) {
    PairedTestReport one = run(kind, {baseline_, other_, references_[0]}, "7", 1);
    PairedTestReport two = run(kind, {baseline_, other_, references_[0]}, "7", 2);
    for (size_t s = 0; s < 3; ++s) {
      for (size_t m = 0; m < 3; ++m) {
        EXPECT_EQ(one.results[s][m].p_value, two.results[s][m].p_value);
        EXPECT_EQ(one.results[s][m].mean, two.results[s][m].mean);
        EXPECT_EQ(one.results[s][m].ci, two.results[s][m].ci);
      }
    }
  }
}

TEST_F(PairedTestProperties, SeedZeroSeedsTheBaselineIntervalButNotTheComparisons) {
  // sacreBLEU's quirk: default_rng(0) for the baseline's interval, default_rng(None) per system.
  PairedTestReport first = run(PairedTestKind::kBootstrap, {baseline_, other_}, "0");
  PairedTestReport second = run(PairedTestKind::kBootstrap, {baseline_, other_}, "0");
  EXPECT_EQ(first.results[0][0].mean, second.results[0][0].mean);
  bool any_differs = false;
  for (size_t m = 0; m < 3; ++m)
    any_differs |= first.results[1][m].mean != second.results[1][m].mean;
  EXPECT_TRUE(any_differs);
  EXPECT_EQ(first.signatures[0].substr(0, 22), "nrefs:1|bs:200|seed:0|");
}

TEST(Significance, BootstrapConfidenceIsReproducibleAndBracketsTheScore) {
  const std::vector<std::string> hyps = {"a b c d", "e f g", "h i j k l", "m n"};
  const ReferenceStreams refs = {{"a b c d", "e f x", "h i j k", "m n o p"}};
  auto bleu = make_resampled_metric(BleuOptions{});
  std::vector<double> statistics = bleu->segment_statistics(hyps, refs);
  ConfidenceInterval a = bootstrap_confidence(*bleu, statistics, hyps.size(), 100, 12345);
  ConfidenceInterval b = bootstrap_confidence(*bleu, statistics, hyps.size(), 100, 12345);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.ci, b.ci);
  EXPECT_GT(a.ci, 0);
  EXPECT_TRUE(std::isfinite(a.mean));
}

}  // namespace
}  // namespace nmtzoo
