// SPDX-License-Identifier: MIT
// BLEU, chrF and TER as sacreBLEU's significance tests and confidence intervals see them
// (sacrebleu/significance.py): one row of numbers per segment, scored from summed rows.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "torch_free/metrics/bleu.h"
#include "torch_free/metrics/chrf.h"
#include "torch_free/metrics/ter.h"

namespace nmtzoo {

using ReferenceStreams = std::vector<std::vector<std::string>>;  // [stream][segment]

// A metric as the significance tests and confidence intervals resample it, behind one virtual
// interface: sufficient statistics as rows of numbers per segment, and the score of summed rows
// computed with the arithmetic of each of sacreBLEU's code paths. A metric is written once, as a
// CorpusMetric (corpus_metric.h); make_resampled_metric adapts it to this view.
class ResampledMetric {
 public:
  virtual ~ResampledMetric() = default;
  // The score's name in sacreBLEU's tables: "BLEU", "chrF2", "chrF2++", "TER".
  virtual std::string name() const = 0;
  virtual size_t statistics_size() const = 0;
  // Row-major segments x statistics_size(), as sacreBLEU's _extract_corpus_statistics.
  virtual std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                                 const ReferenceStreams& references) const = 0;
  // The score of sums held as Python numbers (corpus scores) or as the numpy int64 / float64 rows
  // of approximate randomization (`integer_rows`: BLEU's add-k then adds a truncated value).
  virtual double score(const double* sums, bool integer_rows = false) const = 0;
  // The score of sums held as numpy float32 (bootstrap resampling), with numpy's scalar rules:
  // float32 op float32 stays float32, anything mixed with a Python number becomes float64.
  virtual double score_float32(const float* sums) const = 0;
  // "nrefs:1|case:mixed|...|version:2.6.0+nmtzoo", or with sacreBLEU's abbreviations.
  virtual std::string signature(int num_refs, bool short_form) const = 0;
  // What sacreBLEU prints after the score: BLEU's "72.7/49.6/34.6/24.9 (BP = ...)"; empty for
  // the others.
  virtual std::string verbose(const double* /*sums*/) const { return {}; }
};

std::unique_ptr<ResampledMetric> make_resampled_metric(const BleuOptions& options);
std::unique_ptr<ResampledMetric> make_resampled_metric(const ChrfOptions& options);
std::unique_ptr<ResampledMetric> make_resampled_metric(const TerOptions& options);

// Sums of the rows of row-major `statistics` (segments x width) in Python's order: sequential, in
// double (exact for the integer statistics; TER's average reference lengths as Python adds them).
std::vector<double> sum_statistics(const std::vector<double>& statistics, size_t width);

}  // namespace nmtzoo
