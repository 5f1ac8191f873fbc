// SPDX-License-Identifier: MIT
// nmtzoo._core.metrics: the low-level calls of nmtzoo_metrics (torch_free/metrics/) that
// python/nmtzoo/metrics/ builds sacreBLEU 2.6.0's Python API on. Every number a score object
// shows (scores, precisions, brevity penalty, edits, bootstrap means and intervals, p-values) is
// computed here by the C++ port; Python only arranges and formats them.
//
//   NativeMetric.bleu(...) / .chrf(...) / .ter(...)   a metric with sacreBLEU's options
//   NativeMetric.segment_statistics(hyps, refs)       -> Statistics (one row per segment)
//   NativeMetric.score(statistics)                    -> dict of the summed rows' score
//   NativeMetric.bootstrap(statistics, n, seed)       -> (mean, ci), corpus_score's n_bootstrap
//   NativeMetric.signature(num_refs, short)           -> "nrefs:1|case:mixed|..."
//   paired_test(systems, reference_streams, metric, ...) -> sacreBLEU's PairedTest results
// NativeMetric is not the Python Metric class users extend (python/nmtzoo/metrics/base.py): that
// one is sacreBLEU's API and holds a NativeMetric.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "python/src/bindings.h"
#include "torch_free/metrics/bleu.h"
#include "torch_free/metrics/bleu_tokenizers.h"
#include "torch_free/metrics/bootstrap_resampling.h"
#include "torch_free/metrics/chrf.h"
#include "torch_free/metrics/corpus_metric.h"
#include "torch_free/metrics/numpy_random.h"
#include "torch_free/metrics/resampled_metric.h"
#include "torch_free/metrics/significance.h"
#include "torch_free/metrics/ter.h"
#include "torch_free/metrics/ter_tokenizer.h"

namespace py = pybind11;

namespace nmtzoo {
namespace {

// Segment statistics, row-major (segments x width), as sacreBLEU's _extract_corpus_statistics
// returns them; kept on the C++ side between scoring, bootstrap and the paired tests.
struct Statistics {
  std::vector<double> rows;
  size_t width = 0;
  size_t segments = 0;
};

// One metric: its sacreBLEU-shaped options as the concrete class (for the score's fields) and as
// the significance tests see it (rows, float32 rescoring, signature).
class NativeMetric {
 public:
  template <class Concrete>
  explicit NativeMetric(Concrete concrete)
      : resampled_(make_resampled_metric(concrete.options())), concrete_(std::move(concrete)) {}

  const ResampledMetric& resampled() const { return *resampled_; }
  std::string name() const { return resampled_->name(); }
  size_t width() const { return resampled_->statistics_size(); }
  std::string signature(int num_refs, bool short_form) const {
    return resampled_->signature(num_refs, short_form);
  }

  // `references[i]`: segment i's references (sacreBLEU drops None before this point); zip
  // semantics are the caller's, so both lists have one entry per segment here.
  Statistics segment_statistics(const std::vector<std::string>& hypotheses,
                                const std::vector<std::vector<std::string>>& references) const {
    if (hypotheses.size() != references.size()) {
      throw MetricError("segment_statistics: " + std::to_string(hypotheses.size()) +
                        " hypotheses but references for " + std::to_string(references.size()) +
                        " segments");
    }
    Statistics stats;
    stats.width = width();
    stats.segments = hypotheses.size();
    stats.rows.reserve(stats.segments * stats.width);
    for (size_t i = 0; i < hypotheses.size(); ++i) {
      if (references[i].empty()) {
        throw MetricError("segment " + std::to_string(i + 1) + " has no reference");
      }
      // A corpus of one segment: the references become one-segment streams.
      const std::vector<double> row =
          resampled_->segment_statistics({hypotheses[i]}, single_segment_streams(references[i]));
      stats.rows.insert(stats.rows.end(), row.begin(), row.end());
    }
    return stats;
  }

  // The score of the summed rows (sacreBLEU's _aggregate_and_compute), with each metric's fields.
  py::dict score(const Statistics& stats) const {
    check(stats);
    if (stats.segments == 0) throw MetricError("no segments to score");
    const std::vector<double> sums = sum_statistics(stats.rows, stats.width);
    py::dict out;
    if (const auto* bleu = std::get_if<Bleu>(&concrete_)) {
      BleuStats summed;
      summed.sys_len = static_cast<int64_t>(sums[0]);
      summed.ref_len = static_cast<int64_t>(sums[1]);
      for (int n = 0; n < kBleuMaxOrder; ++n) {
        summed.correct[n] = static_cast<int64_t>(sums[2 + n]);
        summed.total[n] = static_cast<int64_t>(sums[2 + kBleuMaxOrder + n]);
      }
      const BleuScore score = bleu->score_from_stats(summed);
      out["score"] = score.score;
      out["counts"] = std::vector<int64_t>(score.counts.begin(), score.counts.end());
      out["totals"] = std::vector<int64_t>(score.totals.begin(), score.totals.end());
      out["precisions"] = std::vector<double>(score.precisions.begin(), score.precisions.end());
      out["bp"] = score.bp;
      out["sys_len"] = score.sys_len;
      out["ref_len"] = score.ref_len;
    } else if (const auto* chrf = std::get_if<Chrf>(&concrete_)) {
      out["score"] = chrf->f_score(sums.data());
    } else {
      const TerScore score = std::get<Ter>(concrete_).score_from_stats(TerStats{sums[0], sums[1]});
      out["score"] = score.score;
      out["num_edits"] = score.num_edits;
      out["ref_length"] = score.ref_length;
    }
    return out;
  }

  // Metric.corpus_score(..., n_bootstrap=n): mean (statistics.mean) and half-width of the 95%
  // interval of `n_samples` resamples from default_rng(seed).
  std::pair<double, double> bootstrap(const Statistics& stats, int64_t n_samples,
                                      std::optional<uint64_t> seed) const {
    check(stats);
    if (stats.segments == 0 || n_samples < 1) throw MetricError("bootstrap: nothing to resample");
    const ConfidenceInterval interval =
        bootstrap_confidence(*resampled_, stats.rows, stats.segments, n_samples, seed);
    return {interval.mean, interval.ci};
  }

  // significance._bootstrap_resample followed by significance.estimate_ci (numpy's mean), as
  // PairedTest does for the baseline; with `skipped_trials` > 0, the same generator first draws
  // the swaps of that many approximate randomization trials (_paired_ar_test's n_ar_confidence).
  std::pair<double, double> numpy_confidence(const Statistics& stats, int64_t n_samples,
                                             std::optional<uint64_t> seed,
                                             int64_t skipped_trials) const {
    check(stats);
    if (stats.segments == 0 || n_samples < 1) throw MetricError("bootstrap: nothing to resample");
    NumpyGenerator generator(seed);
    if (skipped_trials > 0) {
      const size_t count = static_cast<size_t>(skipped_trials) * stats.segments;
      std::unique_ptr<bool[]> swaps(new bool[count]);
      generator.random_bools(count, swaps.get());
    }
    const std::vector<int64_t> indices = generator.choice_with_replacement(
        static_cast<int64_t>(stats.segments), static_cast<size_t>(n_samples) * stats.segments);
    const ConfidenceInterval interval = numpy_estimate_ci(
        resampled_scores(*resampled_, to_float32(stats.rows), stats.segments, indices, n_samples));
    return {interval.mean, interval.ci};
  }

 private:
  void check(const Statistics& stats) const {
    if (stats.width != width() || stats.rows.size() != stats.segments * stats.width) {
      throw MetricError("statistics of another metric (" + std::to_string(stats.width) +
                        " per segment, " + name() + " has " + std::to_string(width()) + ")");
    }
  }

  std::unique_ptr<ResampledMetric> resampled_;
  std::variant<Bleu, Chrf, Ter> concrete_;
};

std::optional<uint64_t> checked_seed(std::optional<int64_t> seed) {
  if (seed && *seed < 0) throw MetricError("a seed must be non-negative");
  if (!seed) return std::nullopt;
  return static_cast<uint64_t>(*seed);
}

}  // namespace
}  // namespace nmtzoo

void bind_metrics(py::module_& parent) {
  using namespace nmtzoo;
  py::module_ m = parent.def_submodule(
      "metrics", "nmtzoo_metrics (sacreBLEU 2.6.0 in C++); nmtzoo.metrics is the public API");
  py::register_exception<MetricError>(m, "MetricError", PyExc_ValueError);

  m.attr("SACREBLEU_VERSION") = kSacrebleuVersion;
  m.attr("SIGNATURE_VERSION") = kSignatureVersion;
  m.attr("MAX_RESAMPLES") = kMaxResamples;
  m.attr("MAX_NGRAM_ORDER") = kBleuMaxOrder;

  py::class_<Statistics>(m, "Statistics",
                         "Segment statistics of one metric (sacreBLEU's per-segment lists)")
      .def("__len__", [](const Statistics& s) { return s.segments; })
      .def_readonly("width", &Statistics::width)
      .def("rows",
           [](const Statistics& s) {
             std::vector<std::vector<double>> rows(s.segments);
             for (size_t i = 0; i < s.segments; ++i) {
               rows[i].assign(s.rows.begin() + static_cast<std::ptrdiff_t>(i * s.width),
                              s.rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * s.width));
             }
             return rows;
           })
      .def("sums", [](const Statistics& s) { return sum_statistics(s.rows, s.width); });

  py::class_<NativeMetric>(m, "NativeMetric", "BLEU, chrF or TER with sacreBLEU's options")
      .def_static(
          "bleu",
          [](const std::string& tokenize, const std::string& smooth_method,
             std::optional<double> smooth_value, bool lowercase, bool effective_order) {
            BleuOptions options;
            options.tokenizer = parse_bleu_tokenizer(tokenize);
            options.smooth = parse_bleu_smooth(smooth_method);
            options.smooth_value = smooth_value;
            options.lowercase = lowercase;
            options.effective_order = effective_order;
            return NativeMetric(Bleu(options));
          },
          py::arg("tokenize") = "13a", py::arg("smooth_method") = "exp",
          py::arg("smooth_value") = py::none(), py::arg("lowercase") = false,
          py::arg("effective_order") = false)
      .def_static(
          "chrf",
          [](int char_order, int word_order, int beta, bool lowercase, bool whitespace,
             bool eps_smoothing) {
            ChrfOptions options;
            options.char_order = char_order;
            options.word_order = word_order;
            options.beta = beta;
            options.lowercase = lowercase;
            options.whitespace = whitespace;
            options.eps_smoothing = eps_smoothing;
            return NativeMetric(Chrf(options));
          },
          py::arg("char_order") = 6, py::arg("word_order") = 0, py::arg("beta") = 2,
          py::arg("lowercase") = false, py::arg("whitespace") = false,
          py::arg("eps_smoothing") = false)
      .def_static(
          "ter",
          [](bool normalized, bool no_punct, bool asian_support, bool case_sensitive) {
            TerOptions options;
            options.normalized = normalized;
            options.no_punct = no_punct;
            options.asian_support = asian_support;
            options.case_sensitive = case_sensitive;
            return NativeMetric(Ter(options));
          },
          py::arg("normalized") = false, py::arg("no_punct") = false,
          py::arg("asian_support") = false, py::arg("case_sensitive") = false)
      .def_property_readonly("name", &NativeMetric::name,
                             "\"BLEU\", \"chrF2\", \"chrF2++\", \"TER\"")
      .def_property_readonly("width", &NativeMetric::width, "statistics per segment")
      .def("signature", &NativeMetric::signature, py::arg("num_refs"), py::arg("short") = false,
           "\"nrefs:1|case:mixed|...|version:2.6.0+nmtzoo\"; num_refs -1 gives nrefs:var")
      .def("segment_statistics", &NativeMetric::segment_statistics, py::arg("hypotheses"),
           py::arg("references"), py::call_guard<py::gil_scoped_release>(),
           "one row per segment; references[i] are segment i's references (at least one)")
      .def("score", &NativeMetric::score, py::arg("statistics"),
           "the score of the summed rows: dict with score and the metric's fields")
      .def(
          "bootstrap",
          [](const NativeMetric& metric, const Statistics& stats, int64_t n_samples,
             std::optional<int64_t> seed) {
            const auto unsigned_seed = checked_seed(seed);
            py::gil_scoped_release release;
            return metric.bootstrap(stats, n_samples, unsigned_seed);
          },
          py::arg("statistics"), py::arg("n_samples"), py::arg("seed"),
          "(mean, ci) of corpus_score(n_bootstrap=n); seed None = OS entropy")
      .def(
          "numpy_confidence",
          [](const NativeMetric& metric, const Statistics& stats, int64_t n_samples,
             std::optional<int64_t> seed, int64_t skipped_trials) {
            const auto unsigned_seed = checked_seed(seed);
            py::gil_scoped_release release;
            return metric.numpy_confidence(stats, n_samples, unsigned_seed, skipped_trials);
          },
          py::arg("statistics"), py::arg("n_samples"), py::arg("seed"),
          py::arg("skipped_trials") = 0,
          "(mean, ci) as significance.estimate_ci of _bootstrap_resample's scores");

  m.def(
      "tokenize_bleu",
      [](const std::string& line, const std::string& tokenizer) {
        return tokenize_bleu(line, parse_bleu_tokenizer(tokenizer));
      },
      py::arg("line"), py::arg("tokenizer"),
      "one of sacreBLEU's BLEU tokenizers (none, 13a, intl, char, zh)");
  m.def(
      "tokenize_tercom",
      [](const std::string& line, bool normalized, bool no_punct, bool asian_support,
         bool case_sensitive) {
        return tokenize_tercom(line,
                               TerOptions{normalized, no_punct, asian_support, case_sensitive});
      },
      py::arg("line"), py::arg("normalized") = false, py::arg("no_punct") = false,
      py::arg("asian_support") = false, py::arg("case_sensitive") = false,
      "sacreBLEU's TercomTokenizer");

  m.def(
      "parse_seed",
      [](const std::string& text) {
        const SacrebleuSeed seed = SacrebleuSeed::parse(text);
        return py::make_tuple(seed.value ? py::cast(*seed.value) : py::none(), seed.text,
                              seed.paired_text());
      },
      py::arg("text"),
      "SACREBLEU_SEED's text -> (seed or None, signature text, paired tests' signature text)");

  m.def(
      "estimate_ci",
      [](std::vector<double> scores) {
        if (scores.empty()) throw MetricError("estimate_ci: no scores");
        const ConfidenceInterval interval = numpy_estimate_ci(std::move(scores));
        return std::make_pair(interval.mean, interval.ci);
      },
      py::arg("scores"), "significance.estimate_ci: (numpy mean, half-width of the 95% interval)");

  m.def(
      "paired_test",
      [](const std::vector<std::vector<std::string>>& systems,
         const std::vector<std::vector<std::string>>& references, const NativeMetric& metric,
         const std::string& test_type, int64_t n_samples, const std::string& seed_text,
         int threads) {
        PairedTestOptions options;
        if (test_type == "bs") {
          options.kind = PairedTestKind::kBootstrap;
        } else if (test_type == "ar") {
          options.kind = PairedTestKind::kApproximateRandomization;
        } else {
          throw MetricError("unknown test type '" + test_type + "' (ar, bs)");
        }
        options.samples = n_samples;
        options.seed = SacrebleuSeed::parse(seed_text);
        options.threads = std::max(threads, 1);
        PairedTestReport report;
        {
          py::gil_scoped_release release;
          report = paired_test(systems, references, {&metric.resampled()}, options);
        }
        py::list results;
        for (const auto& system : report.results) {
          const PairedResult& r = system.front();
          results.append(py::make_tuple(r.score, r.p_value, r.mean, r.ci));
        }
        py::dict out;
        out["samples"] = report.samples;
        out["signature"] = report.signatures.front();
        out["results"] = results;
        return out;
      },
      py::arg("systems"), py::arg("references"), py::arg("metric"), py::arg("test_type"),
      py::arg("n_samples"), py::arg("seed"), py::arg("threads") = 1,
      "sacreBLEU's PairedTest for one metric: systems[0] is the baseline, references are streams;"
      " results[s] = (score, p_value, mean, ci)");
}
