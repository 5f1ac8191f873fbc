// Plots as SVG text: attention heatmaps and line charts. No plotting library is needed for
// these two chart kinds, and SVG keeps them diffable and viewable in any browser.
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

std::string xml_escape(const std::string& text);

}  // namespace nmtzoo
