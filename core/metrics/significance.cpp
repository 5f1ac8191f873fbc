#include "core/metrics/significance.h"

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

#include "core/metrics/numpy_random.h"

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

// Row-major statistics: append_row(hypothesis, its references, rows) appends one segment's.
template <typename AppendRow>
std::vector<double> statistics_rows(const std::vector<std::string>& hypotheses,
                                    const ReferenceStreams& references, size_t width,
                                    const AppendRow& append_row) {
  int num_refs = 0;
  const auto segments = references_by_segment(references, hypotheses.size(), &num_refs);
  std::vector<double> rows;
  rows.reserve(hypotheses.size() * width);
  for (size_t i = 0; i < hypotheses.size(); ++i) append_row(hypotheses[i], segments[i], rows);
  return rows;
}

class TestedBleu : public TestedMetric {
 public:
  explicit TestedBleu(const BleuOptions& options) : bleu_(options) {
    BleuOptions truncated = options;
    if (options.smooth == BleuSmooth::kAddK) {
      // numpy int64 rows: `correct[n - 1] += smooth_value` stores int(correct + smooth_value).
      truncated.smooth_value = std::trunc(options.smooth_value.value_or(1.0));
    }
    integer_rows_bleu_ = Bleu(truncated);
  }
  std::string name() const override { return "BLEU"; }
  size_t statistics_size() const override { return 2 + 2 * kBleuMaxOrder; }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             const BleuStats stats = bleu_.segment_stats(hypothesis, refs);
                             rows.push_back(static_cast<double>(stats.sys_len));
                             rows.push_back(static_cast<double>(stats.ref_len));
                             for (int64_t n : stats.correct) rows.push_back(static_cast<double>(n));
                             for (int64_t n : stats.total) rows.push_back(static_cast<double>(n));
                           });
  }
  double score(const double* sums, bool integer_rows) const override {
    return (integer_rows ? integer_rows_bleu_ : bleu_).score_from_stats(to_stats(sums)).score;
  }
  // float32 sums of integer statistics are integers, and compute_bleu widens everything it divides
  // with a Python float first: the double arithmetic of the integer path.
  double score_float32(const float* sums) const override {
    std::vector<double> values(sums, sums + statistics_size());
    return score(values.data(), false);
  }
  std::string signature(int num_refs, bool short_form) const override {
    return bleu_.signature(num_refs, short_form);
  }
  std::string verbose(const double* sums) const override {
    return bleu_.score_from_stats(to_stats(sums)).verbose();
  }

 private:
  static BleuStats to_stats(const double* sums) {
    BleuStats stats;
    stats.sys_len = static_cast<int64_t>(sums[0]);
    stats.ref_len = static_cast<int64_t>(sums[1]);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      stats.correct[n] = static_cast<int64_t>(sums[2 + n]);
      stats.total[n] = static_cast<int64_t>(sums[2 + kBleuMaxOrder + n]);
    }
    return stats;
  }
  Bleu bleu_;
  Bleu integer_rows_bleu_;
};

class TestedChrf : public TestedMetric {
 public:
  explicit TestedChrf(const ChrfOptions& options) : chrf_(options) {}
  std::string name() const override {
    ChrfScore score;
    score.char_order = chrf_.options().char_order;
    score.word_order = chrf_.options().word_order;
    score.beta = chrf_.options().beta;
    return score.name();
  }
  size_t statistics_size() const override {
    return static_cast<size_t>(3 * (chrf_.options().char_order + chrf_.options().word_order));
  }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             for (int64_t n : chrf_.segment_stats(hypothesis, refs)) {
                               rows.push_back(static_cast<double>(n));
                             }
                           });
  }
  double score(const double* sums, bool /*integer_rows*/) const override {
    return chrf_.f_score(sums);
  }
  double score_float32(const float* sums) const override { return chrf_.f_score_float32(sums); }
  std::string signature(int num_refs, bool short_form) const override {
    return chrf_.signature(num_refs, short_form);
  }

 private:
  Chrf chrf_;
};

class TestedTer : public TestedMetric {
 public:
  explicit TestedTer(const TerOptions& options) : ter_(options) {}
  std::string name() const override { return "TER"; }
  size_t statistics_size() const override { return 2; }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             const TerStats stats = ter_.segment_stats(hypothesis, refs);
                             rows.push_back(stats.edits);
                             rows.push_back(stats.ref_length);
                           });
  }
  double score(const double* sums, bool /*integer_rows*/) const override {
    return ter_.score_from_stats(TerStats{sums[0], sums[1]}).score;
  }
  // TER._compute_score_from_stats on float32: edits / length is a float32 quotient, and 100 * it
  // a float64 product.
  double score_float32(const float* sums) const override {
    const float edits = sums[0];
    const float length = sums[1];
    double rate = 0.0;
    if (length > 0) {
      rate = static_cast<double>(edits / length);
    } else if (edits > 0) {
      rate = 1.0;
    }
    return 100 * rate;
  }
  std::string signature(int num_refs, bool short_form) const override {
    return ter_.signature(num_refs, short_form);
  }

 private:
  Ter ter_;
};

std::vector<float> to_float32(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

// Scores of `samples` resamples: row j of `indices` (samples x segments) picks the segments.
std::vector<double> resampled_scores(const TestedMetric& metric, const std::vector<float>& statistics,
                                     size_t segments, const std::vector<int64_t>& indices,
                                     int64_t samples) {
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

std::vector<int64_t> resample_indices(std::optional<uint64_t> seed, size_t segments,
                                      int64_t samples) {
  NumpyGenerator generator(seed);
  return generator.choice_with_replacement(static_cast<int64_t>(segments),
                                           static_cast<size_t>(samples) * segments);
}

// The half-width of significance.estimate_ci / Score.estimate_ci over sorted scores.
double half_interval(const std::vector<double>& sorted) {
  const size_t lower = sorted.size() / 40;
  const size_t upper = sorted.size() - lower - 1;
  return 0.5 * (sorted[upper] - sorted[lower]);
}

// significance.estimate_ci: numpy's mean of the sorted scores.
ConfidenceInterval numpy_estimate_ci(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  return {numpy_mean(scores), half_interval(scores)};
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

// significance._compute_p_value: the share of statistics above the real difference, with +1.
double p_value(const std::vector<double>& statistics, double real_difference) {
  const auto above = std::count_if(statistics.begin(), statistics.end(),
                                   [&](double value) { return value > real_difference; });
  return static_cast<double>(above + 1) / static_cast<double>(statistics.size() + 1);
}

// One system against the baseline for one metric, by approximate randomization: each trial swaps
// the two systems' statistics on the segments whose bit is set (pos_sel @ baseline +
// neg_sel @ system, and the converse).
double approximate_randomization_p(const TestedMetric& metric, const std::vector<double>& baseline,
                                   const std::vector<double>& system, size_t segments,
                                   const std::vector<uint8_t>& swaps, int64_t trials,
                                   double real_difference) {
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
  return p_value(deltas, real_difference);
}

std::string lowercase_ascii(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::unique_ptr<TestedMetric> make_tested_metric(const BleuOptions& options) {
  return std::make_unique<TestedBleu>(options);
}
std::unique_ptr<TestedMetric> make_tested_metric(const ChrfOptions& options) {
  return std::make_unique<TestedChrf>(options);
}
std::unique_ptr<TestedMetric> make_tested_metric(const TerOptions& options) {
  return std::make_unique<TestedTer>(options);
}

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
  std::string_view body =
      begin == std::string::npos ? std::string_view{} : std::string_view(text).substr(begin, end - begin + 1);
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

std::string SacrebleuSeed::paired_text() const {
  return value ? std::to_string(*value) : "none";
}

std::optional<uint64_t> SacrebleuSeed::paired_seed() const {
  if (value && *value != 0) return value;
  return std::nullopt;
}

std::vector<double> sum_statistics(const std::vector<double>& statistics, size_t width) {
  std::vector<double> sums(width, 0.0);
  for (size_t start = 0; start < statistics.size(); start += width) {
    for (size_t k = 0; k < width; ++k) sums[k] += statistics[start + k];
  }
  return sums;
}

ConfidenceInterval bootstrap_confidence(const TestedMetric& metric,
                                        const std::vector<double>& statistics, size_t segments,
                                        int64_t n_samples, std::optional<uint64_t> seed) {
  std::vector<double> scores =
      resampled_scores(metric, to_float32(statistics), segments,
                       resample_indices(seed, segments, n_samples), n_samples);
  std::sort(scores.begin(), scores.end());
  return {python_statistics_mean(scores), half_interval(scores)};
}

std::string signature_with_test_fields(const std::string& signature,
                                       const std::vector<std::pair<std::string, std::string>>& fields,
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
                             const std::vector<const TestedMetric*>& metrics,
                             const PairedTestOptions& options) {
  if (systems.size() < 2) throw MetricError("paired tests need a baseline and at least one system");
  const bool bootstrap = options.kind == PairedTestKind::kBootstrap;
  const int64_t samples = options.samples > 0 ? options.samples : (bootstrap ? 1000 : 10000);
  const size_t segments = systems.front().size();
  const size_t n_systems = systems.size();
  const size_t n_metrics = metrics.size();
  for (const auto& system : systems) {
    if (system.size() != segments) {
      throw MetricError(fmt::format("systems have different lengths: {} and {} segments",
                                    segments, system.size()));
    }
  }

  PairedTestReport report;
  report.samples = samples;
  const std::vector<std::pair<std::string, std::string>> fields = {
      {bootstrap ? "bs" : "ar", std::to_string(samples)}, {"seed", options.seed.paired_text()}};
  const int num_refs = static_cast<int>(references.size());
  for (const TestedMetric* metric : metrics) {
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
    const TestedMetric& metric = *metrics[task % n_metrics];
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
      swaps[s].resize(static_cast<size_t>(samples) * segments);
      NumpyGenerator generator(paired_seed);
      generator.random_bools(swaps[s].size(), reinterpret_cast<bool*>(swaps[s].data()));
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
      baseline_scores[m] = resampled_scores(*metrics[m], statistics32[m], segments, indices[0], samples);
      ConfidenceInterval interval = numpy_estimate_ci(baseline_scores[m]);
      report.results[0][m].mean = interval.mean;
      report.results[0][m].ci = interval.ci;
    });
  }

  run_parallel((n_systems - 1) * n_metrics, options.threads, [&](size_t task) {
    const size_t s = 1 + task / n_metrics;
    const size_t m = task % n_metrics;
    const TestedMetric& metric = *metrics[m];
    PairedResult& result = report.results[s][m];
    const double real_difference = std::fabs(report.results[0][m].score - result.score);
    if (!bootstrap) {
      result.p_value = approximate_randomization_p(metric, statistics[m], statistics[s * n_metrics + m],
                                                   segments, swaps_of(s), samples, real_difference);
      return;
    }
    const std::vector<double> baseline =
        shared_draws
            ? baseline_scores[m]
            : resampled_scores(metric, statistics32[m], segments, indices_of(s), samples);
    const std::vector<double> system = resampled_scores(
        metric, statistics32[s * n_metrics + m], segments, indices_of(s), samples);
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
