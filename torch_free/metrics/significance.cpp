// SPDX-License-Identifier: MIT
#include "torch_free/metrics/significance.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "torch_free/metrics/approximate_randomization.h"
#include "torch_free/metrics/numpy_random.h"

namespace nmtzoo {
namespace {

// Runs task(0) ... task(count - 1) on up to `threads` threads; rethrows the first exception.
template <typename Task>
void run_parallel(size_t count, int threads, const Task& task) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min<size_t>(count, static_cast<size_t>(std::max(threads, 1))) - 1;
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

// significance._compute_p_value: the share of statistics above the real difference, with +1.
double p_value(const std::vector<double>& statistics, double real_difference) {
  const auto above = std::count_if(statistics.begin(), statistics.end(),
                                   [&](double value) { return value > real_difference; });
  return static_cast<double>(above + 1) / static_cast<double>(statistics.size() + 1);
}

std::string lowercase_ascii(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

SacrebleuSeed SacrebleuSeed::parse(const std::string& text) {
  SacrebleuSeed seed;
  seed.text = lowercase_ascii(text);
  if (seed.text == "none") {
    seed.value.reset();
    return seed;
  }
  // int(text) in Python: surrounding whitespace, a sign and underscores between digits are
  // accepted; numpy refuses negative seeds, and nmtzoo's generator takes up to 64 bits.
  std::string digits;
  size_t begin = text.find_first_not_of(" \t\n\r\f\v");
  size_t end = text.find_last_not_of(" \t\n\r\f\v");
  std::string_view body = begin == std::string::npos
                              ? std::string_view{}
                              : std::string_view(text).substr(begin, end - begin + 1);
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  bool valid = !body.empty() && std::isdigit(static_cast<unsigned char>(body.front())) &&
               std::isdigit(static_cast<unsigned char>(body.back()));
  for (size_t i = 0; valid && i < body.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(body[i]))) {
      digits.push_back(body[i]);
    } else {
      valid = body[i] == '_' && body[i + 1] != '_';
    }
  }
  errno = 0;
  char* parsed_end = nullptr;
  const unsigned long long value = valid ? std::strtoull(digits.c_str(), &parsed_end, 10) : 0;
  if (!valid || errno == ERANGE) {
    throw MetricError(fmt::format(
        "SACREBLEU_SEED='{}': expected a non-negative integer below 2^64, or 'none'", text));
  }
  seed.value = value;
  return seed;
}

SacrebleuSeed SacrebleuSeed::from_environment() {
  const char* text = std::getenv("SACREBLEU_SEED");
  return parse(text != nullptr ? text : "12345");
}

std::string SacrebleuSeed::paired_text() const { return value ? std::to_string(*value) : "none"; }

std::optional<uint64_t> SacrebleuSeed::paired_seed() const {
  if (value && *value != 0) return value;
  return std::nullopt;
}

std::string signature_with_test_fields(
    const std::string& signature, const std::vector<std::pair<std::string, std::string>>& fields,
    bool short_form) {
  const size_t after_nrefs = signature.find('|');
  std::string inserted;
  for (const auto& [name, value] : fields) {
    inserted += "|" + (short_form && name == "seed" ? std::string("rs") : name) + ":" + value;
  }
  if (after_nrefs == std::string::npos) return signature + inserted;
  return signature.substr(0, after_nrefs) + inserted + signature.substr(after_nrefs);
}

PairedTestReport paired_test(const std::vector<std::vector<std::string>>& systems,
                             const ReferenceStreams& references,
                             const std::vector<const ResampledMetric*>& metrics,
                             const PairedTestOptions& options) {
  if (systems.size() < 2) throw MetricError("paired tests need a baseline and at least one system");
  const bool bootstrap = options.kind == PairedTestKind::kBootstrap;
  const int64_t samples = options.samples > 0 ? options.samples : (bootstrap ? 1000 : 10000);
  const size_t segments = systems.front().size();
  const size_t n_systems = systems.size();
  const size_t n_metrics = metrics.size();
  for (const auto& system : systems) {
    if (system.size() != segments) {
      throw MetricError(fmt::format("systems have different lengths: {} and {} segments", segments,
                                    system.size()));
    }
  }

  PairedTestReport report;
  report.samples = samples;
  const std::vector<std::pair<std::string, std::string>> fields = {
      {bootstrap ? "bs" : "ar", std::to_string(samples)}, {"seed", options.seed.paired_text()}};
  const int num_refs = static_cast<int>(references.size());
  for (const ResampledMetric* metric : metrics) {
    report.metric_names.push_back(metric->name());
    report.signatures.push_back(
        signature_with_test_fields(metric->signature(num_refs, false), fields, false));
    report.short_signatures.push_back(
        signature_with_test_fields(metric->signature(num_refs, true), fields, true));
  }

  // Statistics and corpus scores of every system and metric.
  std::vector<std::vector<double>> statistics(n_systems * n_metrics);
  report.results.assign(n_systems, std::vector<PairedResult>(n_metrics));
  run_parallel(statistics.size(), options.threads, [&](size_t task) {
    const size_t s = task / n_metrics;
    const ResampledMetric& metric = *metrics[task % n_metrics];
    statistics[task] = metric.segment_statistics(systems[s], references);
    report.results[s][task % n_metrics].score =
        metric.score(sum_statistics(statistics[task], metric.statistics_size()).data());
  });

  // The baseline's interval comes from default_rng(seed) as given (0 is a seed there); each
  // comparison's resamples from default_rng(seed if seed else None), fresh per system.
  const std::optional<uint64_t> paired_seed = options.seed.paired_seed();
  const bool shared_draws = paired_seed.has_value();
  std::vector<std::vector<int64_t>> indices(n_systems);  // [0]: the baseline interval's
  std::vector<std::vector<uint8_t>> swaps(n_systems);
  for (size_t s = 0; s < n_systems; ++s) {
    if (bootstrap) {
      if (s == 0 || !shared_draws) {
        indices[s] = resample_indices(s == 0 ? options.seed.value : paired_seed, segments, samples);
      }
    } else if (s > 0 && (s == 1 || !shared_draws)) {
      swaps[s] = random_swaps(paired_seed, segments, samples);
    }
  }
  // With a seed, paired_seed equals the baseline's seed and every system's draws are the same.
  auto indices_of = [&](size_t s) -> const std::vector<int64_t>& {
    return indices[s].empty() ? indices[0] : indices[s];
  };
  auto swaps_of = [&](size_t s) -> const std::vector<uint8_t>& {
    return swaps[s].empty() ? swaps[1] : swaps[s];
  };

  std::vector<std::vector<float>> statistics32(statistics.size());
  if (bootstrap) {
    run_parallel(statistics.size(), options.threads,
                 [&](size_t task) { statistics32[task] = to_float32(statistics[task]); });
  }
  // The baseline's resampled scores, which every comparison reuses when the draws are shared.
  std::vector<std::vector<double>> baseline_scores(n_metrics);
  if (bootstrap) {
    run_parallel(n_metrics, options.threads, [&](size_t m) {
      baseline_scores[m] =
          resampled_scores(*metrics[m], statistics32[m], segments, indices[0], samples);
      ConfidenceInterval interval = numpy_estimate_ci(baseline_scores[m]);
      report.results[0][m].mean = interval.mean;
      report.results[0][m].ci = interval.ci;
    });
  }

  run_parallel((n_systems - 1) * n_metrics, options.threads, [&](size_t task) {
    const size_t s = 1 + task / n_metrics;
    const size_t m = task % n_metrics;
    const ResampledMetric& metric = *metrics[m];
    PairedResult& result = report.results[s][m];
    const double real_difference = std::fabs(report.results[0][m].score - result.score);
    if (!bootstrap) {
      result.p_value = p_value(
          approximate_randomization_deltas(metric, statistics[m], statistics[s * n_metrics + m],
                                           segments, swaps_of(s), samples),
          real_difference);
      return;
    }
    const std::vector<double> baseline =
        shared_draws ? baseline_scores[m]
                     : resampled_scores(metric, statistics32[m], segments, indices_of(s), samples);
    const std::vector<double> system =
        resampled_scores(metric, statistics32[s * n_metrics + m], segments, indices_of(s), samples);
    ConfidenceInterval interval = numpy_estimate_ci(system);
    result.mean = interval.mean;
    result.ci = interval.ci;
    std::vector<double> differences(system.size());
    for (size_t j = 0; j < system.size(); ++j) differences[j] = std::fabs(system[j] - baseline[j]);
    const double mean_difference = numpy_mean(differences);
    for (double& difference : differences) difference -= mean_difference;
    result.p_value = p_value(differences, real_difference);
  });
  return report;
}

}  // namespace nmtzoo
