// SPDX-License-Identifier: MIT
// sacreBLEU 2.6.0's statistical tests (sacrebleu/significance.py, Metric.corpus_score's
// n_bootstrap): 95% confidence intervals by bootstrap resampling, paired bootstrap resampling
// (Koehn 2004) and paired approximate randomization (Riezler & Maxwell 2005), for BLEU, chrF and
// TER. numpy's generator (torch_free/metrics/numpy_random.h) and the float32 arithmetic of
// sacreBLEU's numpy code are reproduced, so the numbers are sacreBLEU's, not merely similar.
//
// The metrics as the tests see them are in torch_free/metrics/resampled_metric.h, bootstrap
// resampling in torch_free/metrics/bootstrap_resampling.h and approximate randomization's trials in
// torch_free/metrics/approximate_randomization.h; this header adds the paired tests that combine
// them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torch_free/metrics/bootstrap_resampling.h"
#include "torch_free/metrics/resampled_metric.h"

namespace nmtzoo {

// SACREBLEU_SEED as sacreBLEU reads it: an integer (default 12345) or "none" (OS entropy).
struct SacrebleuSeed {
  std::optional<uint64_t> value = 12345;  // nullopt: "none"
  std::string text = "12345";  // as given, lowercased: --confidence's signature shows it so

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

enum class PairedTestKind {
  kBootstrap,                 // --paired-bs: 1,000 resamples by default
  kApproximateRandomization,  // --paired-ar: 10,000 trials by default
};

// The most resamples or trials one test may run (nmtzoo-evaluate's -n flags, nmtzoo.metrics): its
// work and memory grow with the count times the segments. The plans' `resamples` share the bound
// (torch_free/config/experiment_plan.cpp, which may not include this layer).
inline constexpr int64_t kMaxResamples = 1000000;

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
  std::vector<std::string> signatures;             // with bs or ar and seed, per metric
  std::vector<std::string> short_signatures;       // the same with sacreBLEU's abbreviations
  std::vector<std::vector<PairedResult>> results;  // [system][metric]; system 0 is the baseline
};

// sacreBLEU's PairedTest: every system against the first (the baseline), for every metric.
// Each system's resamples or trials come from a fresh default_rng(seed), so with a seed all
// systems see the same ones. `systems[s]` has one hypothesis per reference segment.
PairedTestReport paired_test(const std::vector<std::vector<std::string>>& systems,
                             const ReferenceStreams& references,
                             const std::vector<const ResampledMetric*>& metrics,
                             const PairedTestOptions& options);

// `signature` with sacreBLEU's test fields (bs, ar, seed) inserted after nrefs, in the order of
// sacreBLEU's Signature.info; `fields` are (long name, value) pairs.
std::string signature_with_test_fields(
    const std::string& signature, const std::vector<std::pair<std::string, std::string>>& fields,
    bool short_form);

}  // namespace nmtzoo
