// SPDX-License-Identifier: MIT
// The Python and tabulate text shapes nmtzoo-evaluate prints (expected strings printed by
// Python 3.11 and tabulate 0.8.9 as sacreBLEU 2.6.0 calls it).
#include <gtest/gtest.h>

#include "torch_free/metrics/results_table.h"

namespace nmtzoo {
namespace {

TEST(PythonFloatRepr, MatchesPythonRepr) {
  EXPECT_EQ(python_float_repr(41.507182481429226), "41.507182481429226");
  EXPECT_EQ(python_float_repr(100.0), "100.0");
  EXPECT_EQ(python_float_repr(0.0), "0.0");
  EXPECT_EQ(python_float_repr(1.0 / 10001), "9.999000099990002e-05");  // repr(1/10001)
  EXPECT_EQ(python_float_repr(0.001), "0.001");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
}

TEST(FancyGrid, AlignsFirstColumnRightOthersCentredWithMultilineCells) {
  // tabulate({'System': ['Baseline: a', 'bb'], 'BLEU': ['41.5', '42.1\n(p = 0.0949)']},
  //          headers='keys', tablefmt='fancy_grid', colalign=('right',), stralign='center',
  //          numalign='center')
  const std::string expected =
      "╒═════════════╤══════════════╕\n"
      "│      System │     BLEU     │\n"
      "╞═════════════╪══════════════╡\n"
      "│ Baseline: a │     41.5     │\n"
      "├─────────────┼──────────────┤\n"
      "│          bb │     42.1     │\n"
      "│             │ (p = 0.0949) │\n"
      "╘═════════════╧══════════════╛\n";
  EXPECT_EQ(fancy_grid({"System", "BLEU"}, {{"Baseline: a", "41.5"}, {"bb", "42.1\n(p = 0.0949)"}}),
            expected);
}

TEST(FancyGrid, ColumnsAreTwoWiderThanTheirHeadersAndCountCodePoints) {
  const std::string expected =
      "╒══════════╤═════════════════════╕\n"
      "│   System │  BLEU (μ ± 95% CI)  │\n"
      "╞══════════╪═════════════════════╡\n"
      "│       é1 │       1.0 (μ)       │\n"
      "╘══════════╧═════════════════════╛\n";
  EXPECT_EQ(fancy_grid({"System", "BLEU (μ ± 95% CI)"}, {{"é1", "1.0 (μ)"}}), expected);
}

}  // namespace
}  // namespace nmtzoo
