// SPDX-License-Identifier: MIT
#include "torch_free/plot/svg.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nmtzoo {
namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(BarChartSvg, OneBarPerPresentValueWithItsWhiskerAndALegendPerSeries) {
  const std::string svg =
      bar_chart_svg({"de→en", "fr→en"},
                    {{"transformer", {44.8, 50.1}, {1.6, 1.5}},
                     {"rnn <small>", {43.3, std::nan("")}, {1.6, std::nan("")}}},
                    "BLEU", "BLEU");
  EXPECT_EQ(count(svg, "<rect x="), 3u + 1u);  // three bars and the frame
  EXPECT_NE(svg.find("<title>de→en transformer: 44.80</title>"), std::string::npos);
  EXPECT_EQ(svg.find("fr→en rnn"), std::string::npos);
  EXPECT_EQ(count(svg, "stroke=\"#222\""), 3u);                         // a whisker per bar
  EXPECT_NE(svg.find(">rnn &lt;small&gt;</text>"), std::string::npos);  // legend, escaped
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

}  // namespace
}  // namespace nmtzoo
