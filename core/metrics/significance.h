// sacreBLEU 2.6.0's statistical tests (sacrebleu/significance.py, Metric.corpus_score's
// n_bootstrap): 95% confidence intervals by bootstrap resampling, paired bootstrap resampling
// (Koehn 2004) and paired approximate randomization (Riezler & Maxwell 2005), for BLEU, chrF and
// TER. numpy's generator (core/metrics/numpy_random.h) and the float32 arithmetic of sacreBLEU's
// numpy code are reproduced, so the numbers are sacreBLEU's, not merely similar.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/bleu.h"
#include "core/metrics/chrf.h"
#include "core/metrics/ter.h"

namespace nmtzoo {

using ReferenceStreams = std::vector<std::vector<std::string>>;  // [stream][segment]

// A metric as the tests see it: sufficient statistics per segment, and the score of summed
// statistics computed with the arithmetic of each of sacreBLEU's code paths.
class TestedMetric {
 public:
  virtual ~TestedMetric() = default;
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

std::unique_ptr<TestedMetric> make_tested_metric(const BleuOptions& options);
std::unique_ptr<TestedMetric> make_tested_metric(const ChrfOptions& options);
std::unique_ptr<TestedMetric> make_tested_metric(const TerOptions& options);

// SACREBLEU_SEED as sacreBLEU reads it: an integer (default 12345) or "none" (OS entropy).
struct SacrebleuSeed {
  std::optional<uint64_t> value = 12345;  // nullopt: "none"
  std::string text = "12345";     // as given, lowercased: --confidence's signature shows it so

  // Reads the environment; a value that is neither a non-negative integer below 2^64 nor "none"
  // is a MetricError naming SACREBLEU_SEED.
  static SacrebleuSeed from_environment();
  static SacrebleuSeed parse(const std::string& text);
  // The paired tests' signature value: str(int(seed)) or "none".
  std::string paired_text() const;
  // The paired tests' generator seed: sacreBLEU passes `seed if seed else None`, so 0 means OS
  // entropy there (but not for the baseline's confidence interval, nor for --confidence).
  std::optional<uint64_t> paired_seed() const;
};

// Mean and half-width of the 95% interval of bootstrap scores, as sacreBLEU estimates them: the
// scores sorted, the half-distance between the (n/40)-th and (n - n/40 - 1)-th.
struct ConfidenceInterval {
  double mean = 0;
  double ci = 0;
};

// Sums of the rows of row-major `statistics` (segments x width) in Python's order: sequential, in
// double (exact for the integer statistics; TER's average reference lengths as Python adds them).
std::vector<double> sum_statistics(const std::vector<double>& statistics, size_t width);

// Metric.corpus_score(..., n_bootstrap=n) for n > 1: `n` resamples of the segments drawn by
// default_rng(seed), scored from float32 sums; the mean is statistics.mean's (exact, then
// rounded once).
ConfidenceInterval bootstrap_confidence(const TestedMetric& metric,
                                        const std::vector<double>& statistics, size_t segments,
                                        int64_t n_samples, std::optional<uint64_t> seed);

enum class PairedTestKind {
  kBootstrap,                 // --paired-bs: 1,000 resamples by default
  kApproximateRandomization,  // --paired-ar: 10,000 trials by default
};

struct PairedTestOptions {
  PairedTestKind kind = PairedTestKind::kBootstrap;
  int64_t samples = 0;  // 0 = the kind's default
  SacrebleuSeed seed;
  int threads = 2;  // systems x metrics are spread over this many threads
};

// One system's result for one metric, as sacreBLEU's significance.Result.
struct PairedResult {
  double score = 0;
  std::optional<double> p_value;  // absent for the baseline
  std::optional<double> mean;     // bootstrap only
  std::optional<double> ci;
};

struct PairedTestReport {
  int64_t samples = 0;  // resamples or trials used
  std::vector<std::string> metric_names;
  std::vector<std::string> signatures;        // with bs or ar and seed, per metric
  std::vector<std::string> short_signatures;  // the same with sacreBLEU's abbreviations
  std::vector<std::vector<PairedResult>> results;  // [system][metric]; system 0 is the baseline
};

// sacreBLEU's PairedTest: every system against the first (the baseline), for every metric.
// Each system's resamples or trials come from a fresh default_rng(seed), so with a seed all
// systems see the same ones. `systems[s]` has one hypothesis per reference segment.
PairedTestReport paired_test(const std::vector<std::vector<std::string>>& systems,
                             const ReferenceStreams& references,
                             const std::vector<const TestedMetric*>& metrics,
                             const PairedTestOptions& options);

// `signature` with sacreBLEU's test fields (bs, ar, seed) inserted after nrefs, in the order of
// sacreBLEU's Signature.info; `fields` are (long name, value) pairs.
std::string signature_with_test_fields(const std::string& signature,
                                       const std::vector<std::pair<std::string, std::string>>& fields,
                                       bool short_form);

}  // namespace nmtzoo
