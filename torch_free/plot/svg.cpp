// SPDX-License-Identifier: MIT
#include "torch_free/plot/svg.h"

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
  for (double v = std::ceil(low / step) * step; v <= high + step * 1e-9; v += step)
    values.push_back(v);
  return values;
}

std::string format_tick(double value) {
  if (std::fabs(value) >= 10000) return fmt::format("{:.0f}", value);
  return fmt::format("{:g}", std::round(value * 1000) / 1000);
}

const char* colour_of(size_t k) { return kPalette[k % (sizeof kPalette / sizeof kPalette[0])]; }

std::string chart_start(double width, double height, double title_x, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"14\" text-anchor=\"middle\">{}</text>\n",
      width, height, title_x, xml_escape(title));
}

struct PlotArea {
  double left, top, right, bottom;  // pixel edges
};

// Horizontal grid lines with their values, the frame, and the axis labels.
template <class ToPixel>
std::string y_grid_and_frame(const std::vector<double>& y_ticks, ToPixel&& py, const PlotArea& area,
                             const std::string& x_label, const std::string& y_label) {
  std::string svg;
  for (double t : y_ticks) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        area.left, area.right, py(t), area.left - 6, py(t) + 4, format_tick(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      area.left, area.top, area.right - area.left, area.bottom - area.top,
      (area.left + area.right) / 2, area.bottom + 41, xml_escape(x_label),
      (area.top + area.bottom) / 2, xml_escape(y_label));
  return svg;
}

std::string legend_entry(size_t k, double x, double top, const std::string& name) {
  const double y = top + 10 + 20 * static_cast<double>(k);
  return fmt::format(
      "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
      "stroke-width=\"3\"/><text x=\"{4}\" y=\"{5}\">{6}</text>\n",
      x + 12, x + 36, y, colour_of(k), x + 42, y + 4, xml_escape(name));
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
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
  auto py = [&](double y) {
    return height - bottom - (y - y_min) / (y_max - y_min) * (height - top - bottom);
  };

  std::string svg = chart_start(width, height, (left + width - right) / 2, title);
  for (double t : ticks(x_min, x_max)) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(t), top, height - bottom, height - bottom + 16, format_tick(t));
  }
  svg += y_grid_and_frame(ticks(y_min, y_max), py, {left, top, width - right, height - bottom},
                          x_label, y_label);
  for (size_t k = 0; k < series.size(); ++k) {
    const char* colour = colour_of(k);
    std::string points;
    for (size_t i = 0; i < series[k].x.size() && i < series[k].y.size(); ++i) {
      if (!std::isfinite(series[k].x[i]) || !std::isfinite(series[k].y[i])) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(series[k].x[i]), py(series[k].y[i]));
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       points, colour);
    svg += legend_entry(k, width - right, top, series[k].name);
  }
  return svg + "</svg>\n";
}

std::string bar_chart_svg(const std::vector<std::string>& groups,
                          const std::vector<BarSeries>& series, const std::string& title,
                          const std::string& y_label) {
  const double left = 70, right_margin = 170, top = 40, bottom = 55, height = 420;
  const double group_width = std::max(60.0, 24.0 * static_cast<double>(series.size()) + 24);
  const double width =
      left + right_margin + group_width * static_cast<double>(std::max<size_t>(groups.size(), 1));
  const PlotArea area{left, top, width - right_margin, height - bottom};
  double y_max = 0;
  for (const auto& s : series) {
    for (size_t g = 0; g < s.values.size(); ++g) {
      const double error = g < s.errors.size() && std::isfinite(s.errors[g]) ? s.errors[g] : 0;
      if (std::isfinite(s.values[g])) y_max = std::max(y_max, s.values[g] + error);
    }
  }
  if (y_max <= 0) y_max = 1;
  y_max *= 1.05;
  auto py = [&](double y) { return area.bottom - y / y_max * (area.bottom - area.top); };
  std::string svg = chart_start(width, height, (area.left + area.right) / 2, title);
  svg += y_grid_and_frame(ticks(0, y_max), py, area, "", y_label);
  const double bar = (group_width - 24) / static_cast<double>(std::max<size_t>(series.size(), 1));
  for (size_t g = 0; g < groups.size(); ++g) {
    const double x0 = left + group_width * static_cast<double>(g) + 12;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       x0 + (group_width - 24) / 2, area.bottom + 16, xml_escape(groups[g]));
    for (size_t k = 0; k < series.size(); ++k) {
      if (g >= series[k].values.size() || !std::isfinite(series[k].values[g])) continue;
      const double value = series[k].values[g];
      const double x = x0 + bar * static_cast<double>(k);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{} {}: {:.2f}</title></rect>\n",
          x, py(value), bar - 2, area.bottom - py(value), colour_of(k), xml_escape(groups[g]),
          xml_escape(series[k].name), value);
      if (g < series[k].errors.size() && std::isfinite(series[k].errors[g])) {
        const double centre = x + (bar - 2) / 2;
        const double error = series[k].errors[g];
        svg += fmt::format(
            "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
            "stroke=\"#222\"/>\n",
            centre, py(value - error), py(value + error));
      }
    }
  }
  for (size_t k = 0; k < series.size(); ++k)
    svg += legend_entry(k, area.right, top, series[k].name);
  return svg + "</svg>\n";
}

}  // namespace nmtzoo
