// SPDX-License-Identifier: MIT
#include "torch_free/metrics/approximate_randomization.h"

#include <algorithm>
#include <cmath>

#include "torch_free/metrics/numpy_random.h"

namespace nmtzoo {

std::vector<uint8_t> random_swaps(std::optional<uint64_t> seed, size_t segments, int64_t trials) {
  std::vector<uint8_t> swaps(static_cast<size_t>(trials) * segments);
  NumpyGenerator generator(seed);
  generator.random_bools(swaps.size(), reinterpret_cast<bool*>(swaps.data()));
  return swaps;
}

std::vector<double> approximate_randomization_deltas(const ResampledMetric& metric,
                                                     const std::vector<double>& baseline,
                                                     const std::vector<double>& system,
                                                     size_t segments,
                                                     const std::vector<uint8_t>& swaps,
                                                     int64_t trials) {
  const size_t width = metric.statistics_size();
  const std::vector<double> baseline_sums = sum_statistics(baseline, width);
  const std::vector<double> system_sums = sum_statistics(system, width);
  std::vector<double> differences(baseline.size());
  for (size_t i = 0; i < baseline.size(); ++i) differences[i] = baseline[i] - system[i];
  std::vector<double> swapped(width);
  std::vector<double> a(width);
  std::vector<double> b(width);
  std::vector<double> deltas(static_cast<size_t>(trials));
  for (size_t j = 0; j < deltas.size(); ++j) {
    std::fill(swapped.begin(), swapped.end(), 0.0);
    const uint8_t* row = swaps.data() + j * segments;
    for (size_t i = 0; i < segments; ++i) {
      if (row[i] == 0) continue;
      const double* difference = differences.data() + i * width;
      for (size_t k = 0; k < width; ++k) swapped[k] += difference[k];
    }
    for (size_t k = 0; k < width; ++k) {
      a[k] = system_sums[k] + swapped[k];
      b[k] = baseline_sums[k] - swapped[k];
    }
    deltas[j] = std::fabs(metric.score(a.data(), true) - metric.score(b.data(), true));
  }
  return deltas;
}

}  // namespace nmtzoo
