// SPDX-License-Identifier: MIT
#include "torch_free/metrics/grid_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

TEST(AdjustPValues, HolmStepsDownAndBonferroniMultiplies) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const std::vector<double> holm = adjust_p_values(p, MultipleComparisons::kHolm);
  const std::vector<double> expected_holm = {0.03, 0.06, 0.06, 0.02};  // 0.04 x 1 raised to 0.06
  const std::vector<double> bonferroni = adjust_p_values(p, MultipleComparisons::kBonferroni);
  const std::vector<double> expected_bonferroni = {0.04, 0.16, 0.12, 0.02};
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(holm[i], expected_holm[i], 1e-12) << i;
    EXPECT_NEAR(bonferroni[i], expected_bonferroni[i], 1e-12) << i;
  }
  EXPECT_EQ(adjust_p_values({0.5, 0.9}, MultipleComparisons::kBonferroni),
            (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(adjust_p_values(p, MultipleComparisons::kNone), p);
  EXPECT_EQ(parse_multiple_comparisons("holm"), MultipleComparisons::kHolm);
  EXPECT_THROW(parse_multiple_comparisons("fdr"), std::invalid_argument);
}

// Two directions; the baseline copies the references, "weak" drops a word of most lines, and the
// second direction has no "late" outputs yet.
class GridReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string references, weak;
    for (int i = 0; i < 60; ++i) {
      references += "a man in a blue shirt is riding a bike number " + std::to_string(i) + " .\n";
      weak += (i % 4 == 0 ? "a man in a blue shirt is riding a bike number "
                          : "a man in blue shirt riding bike ") +
              std::to_string(i) + " .\n";
    }
    for (const std::string direction : {"one", "two"}) {
      std::filesystem::create_directories(dir_.path(direction));
      testing::write_text(dir_.path(direction + "/test.ref"), references);
      for (const std::string system : {"base", "weak", "late"}) {
        if (direction == "two" && system == "late") continue;
        std::filesystem::create_directories(dir_.path(direction + "/" + system));
        testing::write_text(dir_.path(direction + "/" + system + "/test.hyp"),
                            system == "weak" ? weak : references);
      }
    }
    directions_ = {{"x→y", dir_.path("one"), dir_.path("one/{test}.ref"), {"test"}},
                   {"y→x", dir_.path("two"), dir_.path("two/{test}.ref"), {"test"}}};
  }

  TempDir dir_;
  std::vector<GridDirection> directions_;
  // "late" is tested against "weak", as a multilingual model against its bilingual one.
  const std::vector<GridSystem> systems_ = {
      {"base", "base", 0, {}}, {"weak", "weak", 0, {}}, {"late", "late", 1, {}}};
};

TEST_F(GridReportTest, TestsEverySystemPresentAndCorrectsOverTheGrid) {
  const GridResults results = grid_results(directions_, systems_, MultipleComparisons::kHolm, 200);
  EXPECT_EQ(results.comparisons, 3);  // weak twice, late once (against weak)
  const GridCell& base = results.cells[0][0][0];
  const GridCell& weak = results.cells[0][0][1];
  EXPECT_TRUE(base.present);
  EXPECT_NEAR(base.bleu, 100.0, 1e-9);
  EXPECT_FALSE(base.p_value.has_value());
  ASSERT_TRUE(weak.p_value && weak.p_adjusted);
  EXPECT_LT(weak.bleu, 60.0);
  EXPECT_GE(*weak.p_adjusted, *weak.p_value);
  EXPECT_LT(*weak.p_adjusted, 0.05);
  EXPECT_FALSE(results.cells[1][0][2].present);
  const GridCell& late = results.cells[0][0][2];
  ASSERT_TRUE(late.p_adjusted);
  EXPECT_NEAR(late.bleu, 100.0, 1e-9);
  EXPECT_LT(*late.p_adjusted, 0.05);

  const GridTables tables =
      grid_tables(directions_, systems_, results, "test", MultipleComparisons::kHolm);
  EXPECT_NE(tables.markdown.find("| y→x | 100.00 ± 0.00 |"), std::string::npos) << tables.markdown;
  EXPECT_NE(tables.markdown.find("* |"), std::string::npos);
  EXPECT_NE(tables.markdown.find(" – |\n"), std::string::npos);
  EXPECT_NE(tables.markdown.find(
                "(200 resamples, sacreBLEU 2.6.0's --paired-bs) finds it significant at 0.05 after "
                "Holm's correction over all 3 BLEU comparisons"),
            std::string::npos);
  EXPECT_EQ(tables.markdown.find("No difference can be significant"),
            std::string::npos);  // 3/201 < 0.05
  EXPECT_NE(
      tables.markdown.find("- weak against base on test: significantly better in 0, worse in 2"),
      std::string::npos);
  EXPECT_NE(
      tables.markdown.find("- late against weak on test: significantly better in 1, worse in 0"),
      std::string::npos)
      << tables.markdown;
  EXPECT_EQ(std::count(tables.csv.begin(), tables.csv.end(), '\n'),
            1 + 5);  // header, 5 present cells
}

TEST_F(GridReportTest, ASystemOfSomeDirectionsIsLeftOutOfTheOthers) {
  // "late" translates x→y only (a many-to-one model in a grid of both directions): in y→x it is
  // neither "not run yet" nor tested, even when a folder of that name is there.
  std::vector<GridSystem> systems = systems_;
  systems[2].directions = {"x→y"};
  std::filesystem::create_directories(dir_.path("two/late"));
  testing::write_text(dir_.path("two/late/test.hyp"), "stray\n");
  const GridResults results = grid_results(directions_, systems, MultipleComparisons::kHolm, 200);
  EXPECT_EQ(results.comparisons, 3);
  EXPECT_TRUE(results.cells[0][0][2].present);
  EXPECT_FALSE(results.cells[1][0][2].present);
  const GridTables tables =
      grid_tables(directions_, systems, results, "test", MultipleComparisons::kHolm);
  const std::string& md = tables.markdown;
  const size_t summary_row = md.find("| y→x | 100.00 ± 0.00 |");
  ASSERT_NE(summary_row, std::string::npos) << md;
  EXPECT_TRUE(md.compare(md.find('\n', summary_row) - 3, 3, "| |") == 0)
      << md;  // late's cell: empty
  EXPECT_NE(md.find("– not run yet; empty: the system does not translate that direction."),
            std::string::npos)
      << md;
  const std::string second = md.substr(md.find("\n## y→x"));
  EXPECT_EQ(second.find("| late |"), std::string::npos) << second;
  EXPECT_NE(md.substr(0, md.find("\n## y→x")).find("| test | late | 100.00"), std::string::npos)
      << md;
  EXPECT_EQ(md.find(" – |"), std::string::npos) << md;  // nothing is missing
  EXPECT_NE(md.find("- late against weak on test: significantly better in 1, worse in 0, no "
                    "significant difference in 0"),
            std::string::npos)
      << md;
  EXPECT_EQ(std::count(tables.csv.begin(), tables.csv.end(), '\n'), 1 + 5);
  // Without such a system the note on empty cells is left out.
  std::filesystem::remove_all(dir_.path("two/late"));
  EXPECT_EQ(grid_tables(directions_, systems_,
                        grid_results(directions_, systems_, MultipleComparisons::kHolm, 200),
                        "test", MultipleComparisons::kHolm)
                .markdown.find("empty: the system"),
            std::string::npos);
}

TEST_F(GridReportTest, SaysWhenTooFewResamplesLetNoDifferenceThroughTheCorrection) {
  // 40 resamples: no p below 1/41, which Holm over 3 comparisons makes 0.073.
  GridResults results = grid_results(directions_, systems_, MultipleComparisons::kHolm, 40);
  const GridCell& weak = results.cells[0][0][1];
  ASSERT_TRUE(weak.p_adjusted);
  EXPECT_NEAR(*weak.p_value, 1.0 / 41, 1e-12);
  EXPECT_FALSE(*weak.p_adjusted < 0.05);
  std::string markdown =
      grid_tables(directions_, systems_, results, "test", MultipleComparisons::kHolm).markdown;
  EXPECT_NE(markdown.find("(40 resamples, "), std::string::npos);
  EXPECT_NE(markdown.find("**No difference can be significant here**: with 40 resamples no p-value "
                          "is below 0.0244, "
                          "which Holm's correction over 3 comparisons makes 0.073; set the plan's "
                          "`resamples:` to at "
                          "least 60."),
            std::string::npos)
      << markdown;
  // Without a correction the same 40 resamples can reach 0.024; counts are written with commas.
  EXPECT_EQ(grid_tables(directions_, systems_, results, "test", MultipleComparisons::kNone)
                .markdown.find("No difference can be significant"),
            std::string::npos);
  results.samples = 15;  // 1/16 >= 0.05 even uncorrected
  EXPECT_NE(
      grid_tables(directions_, systems_, results, "test", MultipleComparisons::kNone)
          .markdown.find(
              "with 15 resamples no p-value is below 0.0625; set the plan's `resamples:` to at "
              "least 20."),
      std::string::npos);
  results.samples = 12345;
  markdown =
      grid_tables(directions_, systems_, results, "test", MultipleComparisons::kHolm).markdown;
  EXPECT_NE(markdown.find("(12,345 resamples, "), std::string::npos);
}

TEST_F(GridReportTest, ABaselineAloneHasItsScoreWhileTheOtherSystemsAreNotDecodedYet) {
  std::filesystem::remove_all(dir_.path("two/weak"));
  const GridResults results = grid_results(directions_, systems_, MultipleComparisons::kHolm, 100);
  EXPECT_EQ(results.comparisons, 2);  // direction one only
  const GridCell& alone = results.cells[1][0][0];
  EXPECT_TRUE(alone.present);
  EXPECT_NEAR(alone.bleu, 100.0, 1e-9);
  EXPECT_FALSE(alone.p_value.has_value());
  EXPECT_FALSE(results.cells[1][0][1].present);
}

TEST_F(GridReportTest, AnOutputWithTheWrongLineCountIsNamed) {
  testing::write_text(dir_.path("two/weak/test.hyp"), "one line\n");
  try {
    grid_results(directions_, systems_, MultipleComparisons::kHolm, 100);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("two/weak/test.hyp has 1 lines"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nmtzoo
