// SPDX-License-Identifier: MIT
// Bootstrap resampling as sacreBLEU 2.6.0 does it (sacrebleu/significance.py, Metric.corpus_score's
// n_bootstrap): segments drawn with replacement by numpy's default_rng, resampled statistics
// summed in float32, and the 95% interval estimated from the sorted scores. Paired bootstrap
// resampling (torch_free/metrics/significance.h) builds on the same draws and scores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "torch_free/metrics/resampled_metric.h"

namespace nmtzoo {

// Mean and half-width of the 95% interval of bootstrap scores, as sacreBLEU estimates them: the
// scores sorted, the half-distance between the (n/40)-th and (n - n/40 - 1)-th.
struct ConfidenceInterval {
  double mean = 0;
  double ci = 0;
};

// Metric.corpus_score(..., n_bootstrap=n) for n > 1: `n` resamples of the segments drawn by
// default_rng(seed), scored from float32 sums; the mean is statistics.mean's (exact, then
// rounded once).
ConfidenceInterval bootstrap_confidence(const ResampledMetric& metric,
                                        const std::vector<double>& statistics, size_t segments,
                                        int64_t n_samples, std::optional<uint64_t> seed);

// The draws of `samples` resamples: row j (samples x segments, row-major) holds the segments of
// resample j, from default_rng(seed); nullopt seeds from the OS.
std::vector<int64_t> resample_indices(std::optional<uint64_t> seed, size_t segments,
                                      int64_t samples);

// Statistics as the float32 array sacreBLEU's numpy code holds them.
std::vector<float> to_float32(const std::vector<double>& values);

// Scores of `samples` resamples of the float32 `statistics` (segments x
// metric.statistics_size()): row j of `indices` picks the segments of resample j.
std::vector<double> resampled_scores(const ResampledMetric& metric,
                                     const std::vector<float>& statistics, size_t segments,
                                     const std::vector<int64_t>& indices, int64_t samples);

// significance.estimate_ci: numpy's mean of the sorted scores and the half-width of the 95%
// interval.
ConfidenceInterval numpy_estimate_ci(std::vector<double> scores);

}  // namespace nmtzoo
