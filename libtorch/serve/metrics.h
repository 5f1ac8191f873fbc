// SPDX-License-Identifier: MIT
// Counters and histograms of nmtzoo-serve in Prometheus' text exposition format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nmtzoo {

// Cumulative buckets as Prometheus defines them: counts[i] observations <= bounds[i], and +Inf.
struct Histogram {
  std::vector<double> bounds;
  std::vector<int64_t> counts;  // one per bound
  int64_t count = 0;
  double sum = 0;

  explicit Histogram(std::vector<double> upper_bounds = {});
  void observe(double value);
  // "# HELP", "# TYPE" and the _bucket, _sum and _count lines of metric `name`.
  std::string exposition(const std::string& name, const std::string& help) const;
};

// "# HELP", "# TYPE" and the line of a counter or gauge.
std::string metric_line(const std::string& name, const char* type, const std::string& help,
                        double value);

}  // namespace nmtzoo
