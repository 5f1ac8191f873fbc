#include "core/plot/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace nmtzoo {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// About 5 round tick values covering [low, high].
std::vector<double> ticks(double low, double high) {
  if (!(high > low)) high = low + 1;
  double raw = (high - low) / 5;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * magnitude) {
      step = factor * magnitude;
      break;
    }
  }
  std::vector<double> values;
  for (double v = std::ceil(low / step) * step; v <= high + step * 1e-9; v += step) values.push_back(v);
  return values;
}

std::string format_tick(double value) {
  if (std::fabs(value) >= 10000) return fmt::format("{:.0f}", value);
  return fmt::format("{:g}", std::round(value * 1000) / 1000);
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string heatmap_svg(const std::vector<std::vector<float>>& weights,
                        const std::vector<std::string>& source_labels,
                        const std::vector<std::string>& target_labels, const std::string& title) {
  const int cell = 22;
  size_t longest_source = 1;
  size_t longest_target = 1;
  for (const auto& label : source_labels) longest_source = std::max(longest_source, label.size());
  for (const auto& label : target_labels) longest_target = std::max(longest_target, label.size());
  const int left = 16 + 7 * static_cast<int>(std::min<size_t>(longest_target, 24));
  const int top = 40 + 6 * static_cast<int>(std::min<size_t>(longest_source, 24));
  const int columns = static_cast<int>(source_labels.size());
  const int rows = static_cast<int>(target_labels.size());
  const int width = left + columns * cell + 20;
  const int height = top + rows * cell + 20;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"8\" y=\"16\" font-size=\"13\">{}</text>\n",
      width, height, xml_escape(title));
  for (int s = 0; s < columns; ++s) {
    int x = left + s * cell + cell / 2;
    svg += fmt::format("<text transform=\"translate({},{}) rotate(-60)\">{}</text>\n", x + 4,
                       top - 4, xml_escape(source_labels[s]));
  }
  for (int t = 0; t < rows; ++t) {
    int y = top + t * cell;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       y + cell / 2 + 4, xml_escape(target_labels[t]));
    for (int s = 0; s < columns; ++s) {
      float w = (t < static_cast<int>(weights.size()) && s < static_cast<int>(weights[t].size()))
                    ? std::clamp(weights[t][s], 0.0f, 1.0f)
                    : 0.0f;
      int shade = static_cast<int>(std::lround(255.0 * (1.0 - w)));
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},{})\" "
          "stroke=\"#eee\"><title>{} -> {}: {:.3f}</title></rect>\n",
          left + s * cell, y, cell, cell, shade, shade, shade, xml_escape(target_labels[t]),
          xml_escape(s < columns ? source_labels[s] : ""), w);
    }
  }
  return svg + "</svg>\n";
}

std::string line_chart_svg(const std::vector<PlotSeries>& series, const std::string& title,
                           const std::string& x_label, const std::string& y_label) {
  const double width = 720, height = 420, left = 70, right = 170, top = 40, bottom = 55;
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  for (const auto& s : series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x_min = std::min(x_min, s.x[i]), x_max = std::max(x_max, s.x[i]);
      y_min = std::min(y_min, s.y[i]), y_max = std::max(y_max, s.y[i]);
    }
  }
  if (!std::isfinite(x_min)) x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  if (x_max <= x_min) x_max = x_min + 1;
  if (y_max <= y_min) y_max = y_min + 1;
  const double y_pad = (y_max - y_min) * 0.05;
  y_min -= y_pad, y_max += y_pad;
  auto px = [&](double x) { return left + (x - x_min) / (x_max - x_min) * (width - left - right); };
  auto py = [&](double y) { return height - bottom - (y - y_min) / (y_max - y_min) * (height - top - bottom); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
      width, height, (left + width - right) / 2, xml_escape(title));
  for (double t : ticks(x_min, x_max)) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       px(t), top, height - bottom, height - bottom + 16, format_tick(t));
  }
  for (double t : ticks(y_min, y_max)) {
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                       left, width - right, py(t), left - 6, py(t) + 4, format_tick(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      left, top, width - left - right, height - top - bottom, (left + width - right) / 2,
      height - 14, xml_escape(x_label), (top + height - bottom) / 2, xml_escape(y_label));
  for (size_t k = 0; k < series.size(); ++k) {
    const char* colour = kPalette[k % (sizeof kPalette / sizeof kPalette[0])];
    std::string points;
    for (size_t i = 0; i < series[k].x.size() && i < series[k].y.size(); ++i) {
      if (!std::isfinite(series[k].x[i]) || !std::isfinite(series[k].y[i])) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(series[k].x[i]), py(series[k].y[i]));
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       points, colour);
    double legend_y = top + 10 + 20 * static_cast<double>(k);
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
                       "stroke-width=\"3\"/><text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       width - right + 12, width - right + 36, legend_y, colour,
                       width - right + 42, legend_y + 4, xml_escape(series[k].name));
  }
  return svg + "</svg>\n";
}

}  // namespace nmtzoo
