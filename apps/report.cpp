// SPDX-License-Identifier: MIT
// nmtzoo-report: gathers the results of finished models into a comparison report: a Markdown
// table, a CSV, learning curves of every model on shared axes and BLEU by source length, from the
// files experiments/compare.sh keeps in the report folder (torch_free/metrics/experiment_report.h).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "apps/common.h"
#include "torch_free/data/corpus.h"
#include "torch_free/io/atomic_file.h"
#include "torch_free/metrics/experiment_report.h"
#include "torch_free/plot/svg.h"

namespace {

using namespace nmtzoo;

struct ReportOptions {
  std::string out;
  std::vector<std::string> models;
  std::vector<std::string> tests;
  std::string title = "Comparison";
  std::string data_dir = "data/multi30k";
  std::string src = "de";
  std::string tgt = "en";
  std::string baseline;  // default: transformer when it is one of the models, else the first
  int64_t samples = 1000;
  int64_t seeds = 1;  // > 1: also <model>_seed2 .. _seed<seeds> folders, summarised over seeds
};

int run(const ReportOptions& options) {
  const std::string& out = options.out;
  const std::vector<std::string>& names = options.models;
  const std::vector<std::string>& tests = options.tests;
  const std::string baseline = choose_baseline(names, options.baseline);
  std::vector<ModelResults> models;
  for (const auto& name : names) models.push_back(load_model_results(out, name, tests));
  const ResultsSummary summary = results_summary(models, tests);
  std::vector<PlotSeries> bleu_curves, loss_curves;
  for (const auto& m : models) {
    bleu_curves.push_back({m.name, m.valid_bleu.x, m.valid_bleu.y});
    loss_curves.push_back({m.name, m.train_loss.x, m.train_loss.y});
  }
  auto save = [&](const std::string& name, const std::string& text) {
    write_file_atomically(out + "/" + name, [&](std::ostream& stream) { stream << text; });
  };
  save("valid_bleu_vs_time.svg",
       line_chart_svg(bleu_curves, "Validation BLEU (greedy) during training",
                      "training time (min of the budget)", "BLEU"));
  save("train_loss_vs_step.svg", line_chart_svg(loss_curves, "Training loss (label-smoothed)",
                                                "update step", "loss per target token"));
  save("results.csv", summary.csv);
  std::vector<TestSet> test_sets;
  for (const auto& test : tests) {
    ParallelText text =
        read_parallel(fmt::format("{}/{}.{}.gz", options.data_dir, test, options.src),
                      fmt::format("{}/{}.{}.gz", options.data_dir, test, options.tgt));
    test_sets.push_back({test, std::move(text.src), std::move(text.tgt)});
  }
  const BleuByLength by_length = bleu_by_length(names, test_sets, out);
  std::vector<PlotSeries> length_curves;
  for (size_t i = 0; i < names.size(); ++i) {
    length_curves.push_back({names[i], by_length.curves[i].x, by_length.curves[i].y});
  }
  save("bleu_by_length.svg",
       line_chart_svg(length_curves, "BLEU by source sentence length (all test sets)",
                      "source sentence length (words, bucket centre)", "BLEU"));
  const std::string significance =
      names.size() > 1 ? significance_section(names, baseline, tests, out, options.data_dir,
                                              options.tgt, options.samples)
                       : "";
  const std::string seed_variation =
      options.seeds > 1 ? seed_section(models, options.seeds, tests, out) : "";
  save("results.md", report_markdown(options.title, summary.markdown, seed_variation, significance,
                                     by_length.markdown));
  std::cout << summary.markdown;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write a comparison report (Markdown, CSV, SVG, significance.json) of finished "
      "models from the files experiments/compare.sh keeps in the report folder, one folder "
      "per model, with every model's 95% confidence intervals and paired-bootstrap "
      "p-values against a baseline."};
  ReportOptions o;
  app.add_option("-o,--out", o.out, "report folder (holds <model>/training_summary.json, ...)")
      ->required();
  app.add_option("--models", o.models, "model names, one folder each in the report folder")
      ->required();
  app.add_option("--tests", o.tests, "test split names")->required();
  app.add_option("--title", o.title, "report title");
  app.add_option("--data", o.data_dir, "folder of the test sets")->capture_default_str();
  app.add_option("--src", o.src, "source language")->capture_default_str();
  app.add_option("--tgt", o.tgt, "target language")->capture_default_str();
  app.add_option("--baseline", o.baseline,
                 "model the others are tested against (default: transformer, else the first)");
  app.add_option("--samples", o.samples, "bootstrap resamples of the paired test")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--seeds", o.seeds,
                 "seeds each model was trained with: seed k > 1 in folder <model>_seed<k>; the "
                 "report adds every seed's scores with their mean and standard deviation")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(o); });
}
