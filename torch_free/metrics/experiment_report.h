// SPDX-License-Identifier: MIT
// The contents of nmtzoo-report's comparison of finished models
// (torch_free/metrics/model_results.h): the report's Markdown sections, CSV files and
// significance.json. Plots are the caller's: each curve here is the data of one line of a chart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch_free/metrics/model_results.h"

namespace nmtzoo {

// `requested` when given (a std::runtime_error unless it is one of `names`), else transformer when
// it is one of them, else the first.
std::string choose_baseline(const std::vector<std::string>& names, const std::string& requested);

// The comparison table of every model (Markdown) and the same numbers as results.csv.
struct ResultsSummary {
  std::string markdown;
  std::string csv;
};
ResultsSummary results_summary(const std::vector<ModelResults>& models,
                               const std::vector<std::string>& tests);

struct TestSet {
  std::string name;
  std::vector<std::string> sources;
  std::vector<std::string> references;
};

// BLEU of each model per source-length bucket over all test sets pooled, as in Figure 2 of
// Bahdanau et al. (2015): the Markdown table, and one curve per model (x: the bucket's centre in
// source words), in the order of `models`. Reads <out>/<model>/<test>.hyp.
struct BleuByLength {
  std::string markdown;
  std::vector<Curve> curves;
};
BleuByLength bleu_by_length(const std::vector<std::string>& models,
                            const std::vector<TestSet>& tests, const std::string& out);

// Paired bootstrap resampling (sacreBLEU 2.6.0's --paired-bs, default seed) of every model
// against `baseline` on each test set, for BLEU, chrF2 and TER: Markdown tables of score, 95%
// confidence interval and p-value, a count of the comparisons and of those significant. Writes
// the numbers as JSON to <out>/significance.json.
std::string significance_section(const std::vector<std::string>& names, const std::string& baseline,
                                 const std::vector<std::string>& tests, const std::string& out,
                                 const std::string& data_dir, const std::string& tgt,
                                 int64_t samples);

// Each model trained with seeds 1..seeds (`seed_one`: seed 1's results; seed k > 1 is read from
// <out>/<model>_seed<k>/): every seed's score, their mean and sample standard deviation, per test
// set and metric. Returns the Markdown section; writes <out>/seeds.csv.
std::string seed_section(const std::vector<ModelResults>& seed_one, int64_t seeds,
                         const std::vector<std::string>& tests, const std::string& out);

// results.md: the title, the results table and what its numbers mean, the sections, the charts.
std::string report_markdown(const std::string& title, const std::string& results_table,
                            const std::string& seed_variation, const std::string& significance,
                            const std::string& bleu_by_length);

}  // namespace nmtzoo
