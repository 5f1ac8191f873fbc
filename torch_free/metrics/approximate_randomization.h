// SPDX-License-Identifier: MIT
// Paired approximate randomization (Riezler & Maxwell 2005) as sacreBLEU 2.6.0 runs it
// (sacrebleu/significance.py, _paired_ar_test): each trial swaps the two systems' statistics on a
// random half of the segments and rescores both from the numpy int64 / float64 row sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "torch_free/metrics/resampled_metric.h"

namespace nmtzoo {

// The trials' swaps: row j (trials x segments, row-major) has 1 for the segments trial j swaps,
// as rng.integers(2, size=(trials, segments), dtype=bool) from default_rng(seed); nullopt seeds
// from the OS.
std::vector<uint8_t> random_swaps(std::optional<uint64_t> seed, size_t segments, int64_t trials);

// One system against the baseline for one metric: per trial, the absolute score difference of the
// two systems after the swaps (pos_sel @ baseline + neg_sel @ system, and the converse).
// `baseline` and `system` are their statistics rows (segments x metric.statistics_size()).
std::vector<double> approximate_randomization_deltas(const ResampledMetric& metric,
                                                     const std::vector<double>& baseline,
                                                     const std::vector<double>& system,
                                                     size_t segments,
                                                     const std::vector<uint8_t>& swaps,
                                                     int64_t trials);

}  // namespace nmtzoo
