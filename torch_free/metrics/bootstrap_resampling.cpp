// SPDX-License-Identifier: MIT
#include "torch_free/metrics/bootstrap_resampling.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "torch_free/metrics/numpy_random.h"

namespace nmtzoo {
namespace {

// The half-width of significance.estimate_ci / Score.estimate_ci over sorted scores.
double half_interval(const std::vector<double>& sorted) {
  const size_t lower = sorted.size() / 40;
  const size_t upper = sorted.size() - lower - 1;
  return 0.5 * (sorted[upper] - sorted[lower]);
}

// Shewchuk's exact summation as CPython's math.fsum keeps it: non-overlapping partials whose sum
// is exactly the sum of the values added.
void add_exactly(std::vector<double>& partials, double x) {
  size_t kept = 0;
  for (double y : partials) {
    if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
    const double high = x + y;
    const double low = y - (high - x);
    if (low != 0.0) partials[kept++] = low;
    x = high;
  }
  partials.resize(kept);
  partials.push_back(x);
}

// math.fsum's correctly rounded value of the partials.
double round_partials(const std::vector<double>& partials) {
  size_t n = partials.size();
  if (n == 0) return 0.0;
  double high = partials[--n];
  double low = 0.0;
  while (n > 0) {
    const double x = high;
    const double y = partials[--n];
    high = x + y;
    low = y - (high - x);
    if (low != 0.0) break;
  }
  if (n > 0 && ((low < 0 && partials[n - 1] < 0) || (low > 0 && partials[n - 1] > 0))) {
    const double y = low * 2;
    const double x = high + y;
    if (y == x - high) high = x;
  }
  return high;
}

// Python's statistics.mean of floats: the exact sum divided by n, rounded once. The quotient of
// the rounded sum is corrected by the exactly computed remainder, which gives the correctly
// rounded mean except in ties closer than the remainder's own rounding.
double python_statistics_mean(const std::vector<double>& values) {
  std::vector<double> partials;
  for (double value : values) add_exactly(partials, value);
  const auto n = static_cast<double>(values.size());
  const double quotient = round_partials(partials) / n;
  const double product = quotient * n;
  const double product_error = std::fma(quotient, n, -product);
  add_exactly(partials, -product);
  add_exactly(partials, -product_error);
  return quotient + round_partials(partials) / n;
}

}  // namespace

std::vector<float> to_float32(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

std::vector<int64_t> resample_indices(std::optional<uint64_t> seed, size_t segments,
                                      int64_t samples) {
  NumpyGenerator generator(seed);
  return generator.choice_with_replacement(static_cast<int64_t>(segments),
                                           static_cast<size_t>(samples) * segments);
}

std::vector<double> resampled_scores(const ResampledMetric& metric,
                                     const std::vector<float>& statistics, size_t segments,
                                     const std::vector<int64_t>& indices, int64_t samples) {
  const size_t width = metric.statistics_size();
  std::vector<float> sums(width);
  std::vector<double> scores(static_cast<size_t>(samples));
  for (size_t j = 0; j < scores.size(); ++j) {
    numpy_float32_indexed_column_sums(statistics.data(), width, indices.data() + j * segments,
                                      segments, sums.data());
    scores[j] = metric.score_float32(sums.data());
  }
  return scores;
}

ConfidenceInterval numpy_estimate_ci(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  return {numpy_mean(scores), half_interval(scores)};
}

ConfidenceInterval bootstrap_confidence(const ResampledMetric& metric,
                                        const std::vector<double>& statistics, size_t segments,
                                        int64_t n_samples, std::optional<uint64_t> seed) {
  std::vector<double> scores =
      resampled_scores(metric, to_float32(statistics), segments,
                       resample_indices(seed, segments, n_samples), n_samples);
  std::sort(scores.begin(), scores.end());
  return {python_statistics_mean(scores), half_interval(scores)};
}

}  // namespace nmtzoo
