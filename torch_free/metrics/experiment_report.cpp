// SPDX-License-Identifier: MIT
#include "torch_free/metrics/experiment_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "torch_free/io/atomic_file.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/bleu.h"
#include "torch_free/metrics/significance.h"

namespace nmtzoo {
namespace {

using nlohmann::json;

// Source-length buckets of width 5 words, the last one open: "1-5", "6-10", ..., "31+".
constexpr int kBucketWidth = 5;
constexpr int kBuckets = 7;

std::string bucket_label(int bucket) {
  return bucket + 1 == kBuckets
             ? fmt::format("{}+", bucket * kBucketWidth + 1)
             : fmt::format("{}-{}", bucket * kBucketWidth + 1, (bucket + 1) * kBucketWidth);
}

// The folder of a model's seed: <model> for seed 1 (the one the other sections use), else
// <model>_seed<k>.
std::string seed_folder(const std::string& model, int64_t seed) {
  return seed == 1 ? model : fmt::format("{}_seed{}", model, seed);
}

void write_text(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&](std::ostream& stream) { stream << text; });
}

}  // namespace

std::string choose_baseline(const std::vector<std::string>& names, const std::string& requested) {
  if (requested.empty()) {
    const bool has_transformer =
        std::find(names.begin(), names.end(), "transformer") != names.end();
    return has_transformer ? "transformer" : names.front();
  }
  if (std::find(names.begin(), names.end(), requested) == names.end()) {
    throw std::runtime_error("--baseline '" + requested + "' is not one of --models");
  }
  return requested;
}

ResultsSummary results_summary(const std::vector<ModelResults>& models,
                               const std::vector<std::string>& tests) {
  std::string header =
      "| model | arch | parameters | updates | training time | training tokens/s |";
  std::string rule = "|---|---|---:|---:|---:|---:|";
  std::string csv =
      "model,arch,parameters,updates,train_minutes,train_wall_minutes,train_tgt_tokens_per_second";
  for (const auto& test : tests) {
    header += fmt::format(" {0} BLEU | {0} chrF2 | {0} TER | {0} sent/s |", test);
    rule += "---:|---:|---:|---:|";
    csv += fmt::format(",{0}_bleu,{0}_chrf2,{0}_ter,{0}_sentences_per_second", test);
  }
  std::string table = header + "\n" + rule + "\n";
  csv += "\n";
  for (const auto& m : models) {
    const std::string wall = std::abs(m.wall_minutes - m.budget_minutes) < 0.05
                                 ? ""
                                 : fmt::format(" ({:.1f} here)", m.wall_minutes);
    table += fmt::format("| {} | {} | {:.2f}M | {} | {:.1f} min{} | {:.0f} |", m.name, m.arch,
                         static_cast<double>(m.parameters) / 1e6, m.updates, m.budget_minutes, wall,
                         m.target_tokens_per_second);
    csv += fmt::format("{},{},{},{},{:.2f},{:.2f},{:.0f}", m.name, m.arch, m.parameters, m.updates,
                       m.budget_minutes, m.wall_minutes, m.target_tokens_per_second);
    for (const auto& test : tests) {
      table += fmt::format(" {:.2f} | {:.2f} | {:.2f} | {:.1f} |", m.scores.at("BLEU").at(test),
                           m.scores.at("chrF2").at(test), m.scores.at("TER").at(test),
                           m.sentences_per_second.at(test));
      csv += fmt::format(",{:.2f},{:.2f},{:.2f},{:.2f}", m.scores.at("BLEU").at(test),
                         m.scores.at("chrF2").at(test), m.scores.at("TER").at(test),
                         m.sentences_per_second.at(test));
    }
    table += "\n";
    csv += "\n";
  }
  return {table, csv};
}

BleuByLength bleu_by_length(const std::vector<std::string>& models,
                            const std::vector<TestSet>& tests, const std::string& out) {
  std::vector<int64_t> bucket_of;  // per pooled sentence
  std::vector<std::string> references;
  for (const auto& test : tests) {
    for (size_t i = 0; i < test.sources.size(); ++i) {
      std::istringstream words(test.sources[i]);
      int count = 0;
      for (std::string word; words >> word;) ++count;
      bucket_of.push_back(std::min(kBuckets - 1, std::max(0, (count - 1) / kBucketWidth)));
      references.push_back(test.references[i]);
    }
  }
  std::vector<int64_t> bucket_sizes(kBuckets, 0);
  for (int64_t b : bucket_of) ++bucket_sizes[static_cast<size_t>(b)];
  BleuByLength result;
  std::string& table = result.markdown;
  table = "| source words |";
  std::string rule = "|---|";
  for (int b = 0; b < kBuckets; ++b) {
    table += fmt::format(" {} ({} sent.) |", bucket_label(b), bucket_sizes[static_cast<size_t>(b)]);
    rule += "---:|";
  }
  table += "\n" + rule + "\n";
  for (const auto& model : models) {
    std::vector<std::string> hypotheses;
    for (const auto& test : tests) {
      const std::string path = fmt::format("{}/{}/{}.hyp", out, model, test.name);
      auto lines = read_lines(path);
      if (lines.size() != test.sources.size()) {
        throw std::runtime_error(fmt::format("{} has {} lines, the test set {} has {}", path,
                                             lines.size(), test.name, test.sources.size()));
      }
      hypotheses.insert(hypotheses.end(), lines.begin(), lines.end());
    }
    Curve curve;
    table += "| " + model + " |";
    for (int b = 0; b < kBuckets; ++b) {
      std::vector<std::string> hyps, refs;
      for (size_t i = 0; i < references.size(); ++i) {
        if (bucket_of[i] == b) hyps.push_back(hypotheses[i]), refs.push_back(references[i]);
      }
      if (hyps.empty()) {
        table += " - |";
        continue;
      }
      double bleu = Bleu().corpus_score(hyps, {refs}).score;
      table += fmt::format(" {:.2f} |", bleu);
      curve.x.push_back(b * kBucketWidth +
                        (b + 1 == kBuckets ? kBucketWidth : kBucketWidth / 2.0 + 0.5));
      curve.y.push_back(bleu);
    }
    table += "\n";
    result.curves.push_back(curve);
  }
  return result;
}

std::string significance_section(const std::vector<std::string>& names, const std::string& baseline,
                                 const std::vector<std::string>& tests, const std::string& out,
                                 const std::string& data_dir, const std::string& tgt,
                                 int64_t samples) {
  std::vector<std::string> systems_order{baseline};
  for (const auto& name : names) {
    if (name != baseline) systems_order.push_back(name);
  }
  std::vector<std::unique_ptr<ResampledMetric>> metrics;
  metrics.push_back(make_resampled_metric(BleuOptions{}));
  metrics.push_back(make_resampled_metric(ChrfOptions{}));
  metrics.push_back(make_resampled_metric(TerOptions{}));
  std::vector<const ResampledMetric*> resampled;
  for (const auto& metric : metrics) resampled.push_back(metric.get());
  PairedTestOptions options;
  options.samples = samples;

  std::string text;
  json numbers = json::object();
  int comparisons = 0;
  int significant = 0;
  int significant_corrected = 0;
  const int planned = static_cast<int>((systems_order.size() - 1) * metrics.size() * tests.size());
  const double corrected_threshold = 0.05 / std::max(planned, 1);
  for (const auto& test : tests) {
    const std::string reference_path = fmt::format("{}/{}.{}.gz", data_dir, test, tgt);
    const ReferenceStreams references{read_lines(reference_path)};
    std::vector<std::vector<std::string>> systems;
    for (const auto& name : systems_order) {
      const std::string path = fmt::format("{}/{}/{}.hyp", out, name, test);
      systems.push_back(read_lines(path));
      if (systems.back().size() != references[0].size()) {
        throw std::runtime_error(fmt::format("{} has {} lines, {} has {}", path,
                                             systems.back().size(), reference_path,
                                             references[0].size()));
      }
    }
    const PairedTestReport report = paired_test(systems, references, resampled, options);
    numbers["signatures"] = report.signatures;
    text += fmt::format("\n### {}\n\n| model |", test);
    for (const auto& metric : report.metric_names)
      text += fmt::format(" {} (95% CI) | p |", metric);
    text += "\n|---|";
    for (size_t m = 0; m < metrics.size(); ++m) text += "---:|---:|";
    text += "\n";
    for (size_t s = 0; s < systems.size(); ++s) {
      text += "| " + systems_order[s] + (s == 0 ? " (baseline)" : "") + " |";
      for (size_t m = 0; m < metrics.size(); ++m) {
        const PairedResult& r = report.results[s][m];
        text += fmt::format(" {:.2f} ({:.2f} ± {:.2f}) |", r.score, *r.mean, *r.ci);
        if (!r.p_value) {
          text += " - |";
          continue;
        }
        ++comparisons;
        significant += *r.p_value < 0.05;
        significant_corrected += *r.p_value < corrected_threshold;
        text += fmt::format(" {:.4f}{} |", *r.p_value, *r.p_value < 0.05 ? "*" : "");
        numbers[test][systems_order[s]][report.metric_names[m]]["p_value"] = *r.p_value;
      }
      for (size_t m = 0; m < metrics.size(); ++m) {
        json& entry = numbers[test][systems_order[s]][report.metric_names[m]];
        entry["score"] = report.results[s][m].score;
        entry["mean"] = *report.results[s][m].mean;
        entry["ci"] = *report.results[s][m].ci;
      }
      text += "\n";
    }
  }
  numbers["baseline"] = baseline;
  numbers["samples"] = samples;
  write_text(out + "/significance.json", numbers.dump(1) + "\n");
  return fmt::format(
             "\n## Significance against {0}\n\n"
             "Paired bootstrap resampling (Koehn 2004) as sacreBLEU 2.6.0's `--paired-bs` computes "
             "it (nmtzoo-evaluate gives the same numbers): {1} resamples of the test set, seed "
             "12345; each cell gives the corpus score, then the bootstrap mean ± the half-width of "
             "its 95% confidence interval; p is the probability of a difference at least as large "
             "as the observed one by chance (`*`: p < 0.05). TER is an error rate: lower is "
             "better. The report makes {2} comparisons ({3} model{10} × {4} metrics × {5} test "
             "set{11} against {0}); {6} of them are significant at p < 0.05 (about {7:.1f} would "
             "be by "
             "chance alone if no model differed), {8} at the Bonferroni-corrected p < {9:.4f}.\n",
             baseline, samples, comparisons, systems_order.size() - 1, metrics.size(), tests.size(),
             significant, 0.05 * comparisons, significant_corrected, corrected_threshold,
             systems_order.size() == 2 ? "" : "s", tests.size() == 1 ? "" : "s") +
         text;
}

std::string seed_section(const std::vector<ModelResults>& seed_one, int64_t seeds,
                         const std::vector<std::string>& tests, const std::string& out) {
  std::string text = fmt::format(
      "\n## Variation over {} seeds\n\nEach model trained {} times, with training.seed 1 to {} "
      "(initialisation, batch order, dropout), each seed decoded as above with its own length "
      "penalty chosen on val. Cells: every seed's score, then mean ± sample standard deviation. "
      "The tables above and the significance tests use seed 1.\n",
      seeds, seeds, seeds);
  std::string csv = "model,test,metric";
  for (int64_t s = 1; s <= seeds; ++s) csv += fmt::format(",seed{}", s);
  csv += ",mean,sd\n";
  std::vector<std::vector<ModelResults>> runs;  // by model, then seed
  for (const auto& model : seed_one) {
    runs.push_back({model});
    for (int64_t s = 2; s <= seeds; ++s) {
      runs.back().push_back(load_model_results(out, seed_folder(model.name, s), tests));
    }
  }
  for (const auto& test : tests) {
    text += fmt::format("\n### {}\n\n| model |", test);
    for (const char* metric : kReportMetrics) text += fmt::format(" {} |", metric);
    text += "\n|---|";
    for (size_t m = 0; m < std::size(kReportMetrics); ++m) text += "---|";
    text += "\n";
    for (size_t i = 0; i < seed_one.size(); ++i) {
      const std::string& name = seed_one[i].name;
      text += "| " + name + " |";
      for (const char* metric : kReportMetrics) {
        std::vector<double> scores;
        for (const auto& run : runs[i]) scores.push_back(run.scores.at(metric).at(test));
        const auto n = static_cast<double>(scores.size());
        const double mean = std::accumulate(scores.begin(), scores.end(), 0.0) / n;
        double squares = 0;
        for (double x : scores) squares += (x - mean) * (x - mean);
        const double sd = std::sqrt(squares / (n - 1));
        std::string each;
        for (double x : scores) each += fmt::format("{}{:.2f}", each.empty() ? "" : " / ", x);
        text += fmt::format(" {} → **{:.2f} ± {:.2f}** |", each, mean, sd);
        csv += fmt::format("{},{},{}", name, test, metric);
        for (double x : scores) csv += fmt::format(",{:.2f}", x);
        csv += fmt::format(",{:.3f},{:.3f}\n", mean, sd);
      }
      text += "\n";
    }
  }
  write_text(out + "/seeds.csv", csv);
  return text;
}

std::string report_markdown(const std::string& title, const std::string& results_table,
                            const std::string& seed_variation, const std::string& significance,
                            const std::string& bleu_by_length) {
  return "# " + title + "\n\n" + results_table +
         "\nBLEU, chrF2 and TER: nmtzoo-evaluate (sacreBLEU 2.6.0 definitions, "
         "cased, BLEU tokenizer 13a, TER tercom), beam 5, each model's checkpoint and "
         "length penalty chosen on val. "
         "Training time, validation included: for a run budgeted in time, the budget spent "
         "(training.max_time: minutes of the reference machine, a second on another machine "
         "counting at the ratio of matmul ceilings), with wall-clock minutes in brackets where "
         "they differ; for a run budgeted in updates (training.max_steps), the wall-clock "
         "minutes of the machine that trained it, which other jobs may have shared. tokens/s "
         "counts non-pad target tokens while training.\n" +
         seed_variation + significance +
         "\n"
         "![validation BLEU](valid_bleu_vs_time.svg)\n![training loss](train_loss_vs_step.svg)\n\n"
         "## BLEU by source sentence length\n\n" +
         bleu_by_length + "\n![BLEU by length](bleu_by_length.svg)\n";
}

}  // namespace nmtzoo
