// SPDX-License-Identifier: MIT
// Plots as SVG text: attention heatmaps, line charts and grouped bar charts. No plotting library
// is needed for these chart kinds, and SVG keeps them diffable and viewable in any browser.
#pragma once

#include <string>
#include <vector>

namespace nmtzoo {

// weights[t][s]: attention of target position t on source position s, in [0, 1]. Source labels
// run along the top, target labels down the left (Bahdanau et al. 2015, Figure 3).
std::string heatmap_svg(const std::vector<std::vector<float>>& weights,
                        const std::vector<std::string>& source_labels,
                        const std::vector<std::string>& target_labels, const std::string& title);

struct PlotSeries {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
};

// One chart with shared axes; each series a coloured polyline with markers and a legend entry.
std::string line_chart_svg(const std::vector<PlotSeries>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label);

struct BarSeries {
  std::string name;
  std::vector<double> values;  // one per group; NaN: no bar
  std::vector<double> errors;  // half-widths of whiskers (a 95% CI), one per group; empty: none
};

// Bars from zero, one group per label, one coloured bar per series in each group, a legend entry
// per series.
std::string bar_chart_svg(const std::vector<std::string>& groups,
                          const std::vector<BarSeries>& series, const std::string& title,
                          const std::string& y_label);

std::string xml_escape(const std::string& text);

}  // namespace nmtzoo
