// SPDX-License-Identifier: MIT
// nmtzoo-evaluate's output, byte for byte as sacreBLEU 2.6.0's command line prints it (-f text or
// -f json, without colours): one line or JSON object per metric for one system, per segment in
// sentence-level mode, and the systems x metrics table of several systems and of the paired tests.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "torch_free/metrics/significance.h"

namespace nmtzoo {

// What sacreBLEU's printing depends on.
struct ReportFormat {
  int width = 1;                         // decimals of the scores
  bool json = false;                     // -f json
  bool score_only = false;               // -b: the scores alone
  bool short_signature = false;          // sacreBLEU's abbreviated signatures
  std::optional<PairedTestKind> paired;  // the paired test of the table, if any
  int64_t paired_samples = 0;            // its resamples or trials, as asked
};

// One metric's corpus (or segment) result, in the shapes sacreBLEU prints.
struct ScoreResult {
  std::string name;
  double score = 0.0;
  std::string verbose;  // BLEU only
  std::string signature;
  std::string short_signature;
  std::optional<ConfidenceInterval> confidence;  // --confidence
};

// Score.format's `sc`: the score, and "(μ = MEAN ± CI)" after a bootstrap with a positive mean.
std::string score_text(const ScoreResult& result, int width);
// sacreBLEU's Score.format(..., is_json=True): json.dumps(d, indent=1, ensure_ascii=False) of
// name, score (rounded to the width), signature, the confidence fields, verbose score and the
// signature's fields, in that order; with `indent` false, json.dumps(d) on one line.
std::string score_json(const ScoreResult& result, int width, bool indent);
// "NAME|SIGNATURE = SCORE VERBOSE", or the score alone with score_only.
std::string score_line(const ScoreResult& result, const ReportFormat& format);

// The result of the summed `statistics` (segments x metric.statistics_size(), row-major).
ScoreResult corpus_result(const ResampledMetric& metric, const std::vector<double>& statistics,
                          int num_refs);
// Each segment's result, for sentence-level mode.
std::vector<ScoreResult> segment_results(const ResampledMetric& metric,
                                         const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references);
// Metric.corpus_score(n_bootstrap=n): the confidence interval of `n_samples` resamples from a
// fresh default_rng(seed), and bs and seed (as given) in the signatures.
void add_confidence(ScoreResult& result, const ResampledMetric& metric,
                    const std::vector<double>& statistics, size_t segments, int64_t n_samples,
                    const SacrebleuSeed& seed);

// Sentence-level mode: one line, or one JSON object on a line, per segment.
void print_segment_results(const std::vector<ScoreResult>& results, const ReportFormat& format,
                           std::ostream& out);
// sacreBLEU's print_single_results for one system: a line per metric, the names right-aligned so
// that the '=' line up; or the JSON object, or the list of them.
void print_corpus_results(const std::vector<ScoreResult>& results, const ReportFormat& format,
                          std::ostream& out);

// Several systems scored by several metrics, as sacreBLEU's print_results_table takes them.
struct ResultsTable {
  std::vector<std::string> system_names;
  std::vector<std::string> metric_names;
  std::vector<std::string> signatures;                // per metric
  std::vector<std::vector<std::string>> text_cells;   // [system][metric]
  std::vector<std::vector<std::string>> json_values;  // [system][metric], JSON text
};

// The corpus score of every system for every metric.
ResultsTable scores_table(const std::vector<std::string>& system_names,
                          const std::vector<std::vector<std::string>>& hypotheses,
                          const ReferenceStreams& references,
                          const std::vector<const ResampledMetric*>& metrics,
                          const ReportFormat& format);
// The paired test's cells (_format_score_lines): "SCORE (MEAN ± CI)" and, for a compared system,
// "(p = P)" on a second line, with a star when p <= 0.05.
ResultsTable paired_table(const std::vector<std::string>& system_names,
                          const PairedTestReport& report, const ReportFormat& format);

// sacreBLEU's print_results_table: the systems x metrics table in text (tabulate's fancy_grid),
// the paired test's explanation and the signatures; or the JSON list of systems.
void print_results_table(const ResultsTable& table, const ReportFormat& format, std::ostream& out);

}  // namespace nmtzoo
