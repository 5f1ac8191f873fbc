// SPDX-License-Identifier: MIT
#include "libtorch/serve/metrics.h"

#include <fmt/format.h>

namespace nmtzoo {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size(), 0) {}

void Histogram::observe(double value) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) ++counts[i];
  }
  ++count;
  sum += value;
}

std::string Histogram::exposition(const std::string& name, const std::string& help) const {
  std::string text = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  for (size_t i = 0; i < bounds.size(); ++i) {
    text += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds[i], counts[i]);
  }
  text += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count, name,
                      sum, name, count);
  return text;
}

std::string metric_line(const std::string& name, const char* type, const std::string& help,
                        double value) {
  return fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace nmtzoo
