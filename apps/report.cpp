// nmtzoo-report: gathers the results of finished models into a comparison report: a Markdown
// table, a CSV, learning curves of every model on shared axes and BLEU by source length.
//
// It reads only the files scripts/compare.sh keeps in the report folder, one folder per model
// (<out>/<model>/training_summary.json, metrics.jsonl, <test>.hyp, <test>.scores.json,
// <test>.speed.json), never checkpoints: those files are committed, so a report can be rebuilt
// and a model added to it without the other models' run folders.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "apps/common.h"
#include "core/data/corpus.h"
#include "core/io/atomic_file.h"
#include "core/io/text_file.h"
#include "core/metrics/bleu.h"
#include "core/metrics/significance.h"
#include "core/plot/svg.h"

namespace {

using namespace nmtzoo;
using nlohmann::json;

// The scores the report compares, as nmtzoo-evaluate names them.
constexpr const char* kMetrics[] = {"BLEU", "chrF2", "TER"};

struct ModelResults {
  std::string name;
  std::string arch;
  int64_t parameters = 0;
  int64_t updates = 0;
  double budget_minutes = 0;  // of training.max_time, i.e. on the reference machine
  double wall_minutes = 0;
  double target_tokens_per_second = 0;
  std::map<std::string, std::map<std::string, double>> scores;  // by metric, then test set
  std::map<std::string, double> sentences_per_second;
  PlotSeries valid_bleu;
  PlotSeries train_loss;
};

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
}

// record[key], or an error naming the file and the missing key.
template <typename T>
T get(const json& record, const std::string& key, const std::string& where) {
  if (!record.is_object() || !record.contains(key)) {
    throw std::runtime_error(where + ": missing key '" + key + "'");
  }
  try {
    return record.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(where + ": key '" + key + "' has the wrong type");
  }
}

// Maps a run's wall-clock seconds to the seconds of its time budget (training.max_time) spent by
// then: each session after a start or resume counts its seconds at the ratio of the matmul
// ceiling it measured to training.reference_gflops (training_summary.json's budget_sessions), so
// runs made on machines of different speeds share the report's time axis.
class BudgetClock {
 public:
  BudgetClock(const json& summary, const std::string& where) {
    if (!summary.contains("budget_sessions")) return;  // no reference machine: budget = wall
    for (const auto& session : summary.at("budget_sessions")) {
      sessions_.emplace_back(get<double>(session, "started_at_wall_seconds", where),
                             get<double>(session, "scale", where));
    }
  }

  double budget_seconds(double wall_seconds) const {
    double budget = 0, at = 0, scale = 1;
    for (const auto& [start, session_scale] : sessions_) {
      if (wall_seconds <= start) break;
      budget += (start - at) * scale;
      at = start;
      scale = session_scale;
    }
    return budget + (wall_seconds - at) * scale;
  }

 private:
  std::vector<std::pair<double, double>> sessions_;  // wall-clock second it started at, scale
};

ModelResults load_model(const std::string& out, const std::string& name,
                        const std::vector<std::string>& tests) {
  const std::string dir = out + "/" + name;
  ModelResults model;
  model.name = name;
  const std::string summary_path = dir + "/training_summary.json";
  const json summary = read_json(summary_path);
  model.arch = get<std::string>(summary, "arch", summary_path);
  model.parameters = get<int64_t>(summary, "parameters", summary_path);
  model.updates = get<int64_t>(summary, "updates", summary_path);
  const double wall_seconds = get<double>(summary, "wall_seconds", summary_path);
  const BudgetClock clock(summary, summary_path);
  const double budget_seconds = clock.budget_seconds(wall_seconds);
  if (summary.contains("budget_seconds") &&
      std::abs(budget_seconds - get<double>(summary, "budget_seconds", summary_path)) > 1.0) {
    throw std::runtime_error(fmt::format(
        "{}: budget_sessions add up to {:.1f} s of budget at wall_seconds, but budget_seconds "
        "says {:.1f}", summary_path, budget_seconds, summary.at("budget_seconds").get<double>()));
  }
  model.budget_minutes = budget_seconds / 60;
  model.wall_minutes = wall_seconds / 60;
  model.target_tokens_per_second = get<double>(summary, "target_tokens_per_second", summary_path);
  for (const auto& test : tests) {
    const std::string scores_path = fmt::format("{}/{}.scores.json", dir, test);
    for (const auto& score : read_json(scores_path)) {
      const auto metric = get<std::string>(score, "name", scores_path);
      model.scores[metric][test] = get<double>(score, "score", scores_path);
    }
    for (const char* metric : kMetrics) {
      if (!model.scores[metric].count(test)) {
        throw std::runtime_error(fmt::format("{}: has no {} score (scripts/compare.sh scores "
                                             "BLEU, chrF2 and TER)", scores_path, metric));
      }
    }
    const std::string speed_path = fmt::format("{}/{}.speed.json", dir, test);
    model.sentences_per_second[test] = get<double>(read_json(speed_path), "sentences_per_second", speed_path);
  }
  model.valid_bleu.name = name;
  model.train_loss.name = name;
  const std::string metrics_path = dir + "/metrics.jsonl";
  const auto lines = read_lines(metrics_path);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = fmt::format("{}:{}", metrics_path, i + 1);
    const auto record = json::parse(lines[i], nullptr, false);
    if (record.is_discarded()) throw std::runtime_error(where + ": not valid JSON");
    const auto type = get<std::string>(record, "type", where);
    if (type == "valid" && record.contains("bleu")) {
      model.valid_bleu.x.push_back(clock.budget_seconds(get<double>(record, "wall_seconds", where)) / 60);
      model.valid_bleu.y.push_back(get<double>(record, "bleu", where));
    } else if (type == "train") {
      model.train_loss.x.push_back(get<double>(record, "step", where));
      model.train_loss.y.push_back(get<double>(record, "loss", where));
    }
  }
  return model;
}

// Source-length buckets of width 5 words, the last one open: "1-5", "6-10", ..., "31+".
constexpr int kBucketWidth = 5;
constexpr int kBuckets = 7;

std::string bucket_label(int bucket) {
  return bucket + 1 == kBuckets ? fmt::format("{}+", bucket * kBucketWidth + 1)
                                : fmt::format("{}-{}", bucket * kBucketWidth + 1, (bucket + 1) * kBucketWidth);
}

// BLEU of each model per source-length bucket over all test sets pooled, as in Figure 2 of
// Bahdanau et al. (2015). Returns the Markdown table; writes bleu_by_length.svg.
std::string bleu_by_length(const std::vector<ModelResults>& models, const std::vector<std::string>& tests,
                           const std::string& out, const std::string& data_dir,
                           const std::string& src, const std::string& tgt) {
  std::vector<std::vector<std::string>> bucket_sources(kBuckets);
  std::vector<int64_t> bucket_of;  // per pooled sentence
  std::vector<std::string> references;
  std::map<std::string, size_t> test_sizes;
  for (const auto& test : tests) {
    ParallelText text = read_parallel(fmt::format("{}/{}.{}.gz", data_dir, test, src),
                                      fmt::format("{}/{}.{}.gz", data_dir, test, tgt));
    test_sizes[test] = text.size();
    for (size_t i = 0; i < text.size(); ++i) {
      std::istringstream words(text.src[i]);
      int count = 0;
      for (std::string word; words >> word;) ++count;
      bucket_of.push_back(std::min(kBuckets - 1, std::max(0, (count - 1) / kBucketWidth)));
      references.push_back(text.tgt[i]);
    }
  }
  std::vector<int64_t> bucket_sizes(kBuckets, 0);
  for (int64_t b : bucket_of) ++bucket_sizes[static_cast<size_t>(b)];
  std::string table = "| source words |";
  std::string rule = "|---|";
  for (int b = 0; b < kBuckets; ++b) {
    table += fmt::format(" {} ({} sent.) |", bucket_label(b), bucket_sizes[static_cast<size_t>(b)]);
    rule += "---:|";
  }
  table += "\n" + rule + "\n";
  std::vector<PlotSeries> curves;
  for (const auto& r : models) {
    std::vector<std::string> hypotheses;
    for (const auto& test : tests) {
      const std::string path = fmt::format("{}/{}/{}.hyp", out, r.name, test);
      auto lines = read_lines(path);
      if (lines.size() != test_sizes.at(test)) {
        throw std::runtime_error(fmt::format("{} has {} lines, the test set {} has {}", path,
                                             lines.size(), test, test_sizes.at(test)));
      }
      hypotheses.insert(hypotheses.end(), lines.begin(), lines.end());
    }
    PlotSeries curve{r.name, {}, {}};
    table += "| " + r.name + " |";
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
      curve.x.push_back(b * kBucketWidth + (b + 1 == kBuckets ? kBucketWidth : kBucketWidth / 2.0 + 0.5));
      curve.y.push_back(bleu);
    }
    table += "\n";
    curves.push_back(curve);
  }
  write_file_atomically(out + "/bleu_by_length.svg", [&](std::ostream& stream) {
    stream << line_chart_svg(curves, "BLEU by source sentence length (all test sets)",
                             "source sentence length (words, bucket centre)", "BLEU");
  });
  return table;
}

// Paired bootstrap resampling (sacreBLEU 2.6.0's --paired-bs, default seed) of every model
// against `baseline` on each test set, for BLEU, chrF2 and TER: Markdown tables of score, 95%
// confidence interval and p-value, a count of the comparisons and of those significant, and the
// numbers as JSON in significance.json.
std::string significance_section(const std::vector<std::string>& names, const std::string& baseline,
                                 const std::vector<std::string>& tests, const std::string& out,
                                 const std::string& data_dir, const std::string& tgt,
                                 int64_t samples) {
  std::vector<std::string> systems_order{baseline};
  for (const auto& name : names) {
    if (name != baseline) systems_order.push_back(name);
  }
  std::vector<std::unique_ptr<TestedMetric>> metrics;
  metrics.push_back(make_tested_metric(BleuOptions{}));
  metrics.push_back(make_tested_metric(ChrfOptions{}));
  metrics.push_back(make_tested_metric(TerOptions{}));
  std::vector<const TestedMetric*> tested;
  for (const auto& metric : metrics) tested.push_back(metric.get());
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
        throw std::runtime_error(fmt::format("{} has {} lines, {} has {}", path, systems.back().size(),
                                             reference_path, references[0].size()));
      }
    }
    const PairedTestReport report = paired_test(systems, references, tested, options);
    numbers["signatures"] = report.signatures;
    text += fmt::format("\n### {}\n\n| model |", test);
    for (const auto& metric : report.metric_names) text += fmt::format(" {} (95% CI) | p |", metric);
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
  write_file_atomically(out + "/significance.json",
                        [&](std::ostream& stream) { stream << numbers.dump(1) << "\n"; });
  return fmt::format(
             "\n## Significance against {0}\n\n"
             "Paired bootstrap resampling (Koehn 2004) as sacreBLEU 2.6.0's `--paired-bs` computes "
             "it (nmtzoo-evaluate gives the same numbers): {1} resamples of the test set, seed "
             "12345; each cell gives the corpus score, then the bootstrap mean ± the half-width of "
             "its 95% confidence interval; p is the probability of a difference at least as large "
             "as the observed one by chance (`*`: p < 0.05). TER is an error rate: lower is "
             "better. The report makes {2} comparisons ({3} model{10} × {4} metrics × {5} test "
             "set{11} against {0}); {6} of them are significant at p < 0.05 (about {7:.1f} would be by "
             "chance alone if no model differed), {8} at the Bonferroni-corrected p < {9:.4f}.\n",
             baseline, samples, comparisons, systems_order.size() - 1, metrics.size(), tests.size(),
             significant, 0.05 * comparisons, significant_corrected, corrected_threshold,
             systems_order.size() == 2 ? "" : "s", tests.size() == 1 ? "" : "s") +
         text;
}

// The folder of a model's seed: <model> for seed 1 (the one the other sections use), else
// <model>_seed<k>.
std::string seed_folder(const std::string& model, int64_t seed) {
  return seed == 1 ? model : fmt::format("{}_seed{}", model, seed);
}

// Each model trained with seeds 1..seeds (`seed_one`: seed 1's results, already loaded): every
// seed's score, their mean and sample standard deviation, per test set and metric. Returns the
// Markdown section; writes seeds.csv.
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
      runs.back().push_back(load_model(out, seed_folder(model.name, s), tests));
    }
  }
  for (const auto& test : tests) {
    text += fmt::format("\n### {}\n\n| model |", test);
    for (const char* metric : kMetrics) text += fmt::format(" {} |", metric);
    text += "\n|---|";
    for (size_t m = 0; m < std::size(kMetrics); ++m) text += "---|";
    text += "\n";
    for (size_t i = 0; i < seed_one.size(); ++i) {
      const std::string& name = seed_one[i].name;
      text += "| " + name + " |";
      for (const char* metric : kMetrics) {
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
  write_file_atomically(out + "/seeds.csv", [&](std::ostream& stream) { stream << csv; });
  return text;
}

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
  std::string baseline = options.baseline;
  if (baseline.empty()) {
    const bool has_transformer = std::find(names.begin(), names.end(), "transformer") != names.end();
    baseline = has_transformer ? "transformer" : names.front();
  } else if (std::find(names.begin(), names.end(), baseline) == names.end()) {
    throw std::runtime_error("--baseline '" + baseline + "' is not one of --models");
  }
  std::vector<ModelResults> models;
  for (const auto& name : names) models.push_back(load_model(out, name, tests));
  std::string header = "| model | arch | parameters | updates | training time | training tokens/s |";
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
  std::vector<PlotSeries> bleu_curves, loss_curves;
  for (const auto& m : models) {
    bleu_curves.push_back(m.valid_bleu);
    loss_curves.push_back(m.train_loss);
  }
  auto save = [&](const std::string& name, const std::string& text) {
    write_file_atomically(out + "/" + name, [&](std::ostream& stream) { stream << text; });
  };
  save("valid_bleu_vs_time.svg", line_chart_svg(bleu_curves, "Validation BLEU (greedy) during training",
                                                "training time (min of the budget)", "BLEU"));
  save("train_loss_vs_step.svg", line_chart_svg(loss_curves, "Training loss (label-smoothed)",
                                                "update step", "loss per target token"));
  save("results.csv", csv);
  const std::string by_length =
      bleu_by_length(models, tests, out, options.data_dir, options.src, options.tgt);
  const std::string significance =
      names.size() > 1 ? significance_section(names, baseline, tests, out, options.data_dir,
                                              options.tgt, options.samples)
                       : "";
  const std::string seed_variation =
      options.seeds > 1 ? seed_section(models, options.seeds, tests, out) : "";
  std::string markdown = "# " + options.title + "\n\n" + table +
                         "\nBLEU, chrF2 and TER: nmtzoo-evaluate (sacreBLEU 2.6.0 definitions, "
                         "cased, BLEU tokenizer 13a, TER tercom), beam 5, each model's checkpoint and "
                         "length penalty chosen on val. "
                         "Training time, validation included, is the time budget spent (training.max_time: "
                         "minutes of the reference machine, a second on another machine counting at "
                         "the ratio of matmul ceilings), with wall-clock minutes in brackets where "
                         "they differ; tokens/s counts non-pad target tokens while training.\n" + seed_variation + significance + "\n"
                         "![validation BLEU](valid_bleu_vs_time.svg)\n![training loss](train_loss_vs_step.svg)\n\n"
                         "## BLEU by source sentence length\n\n" + by_length +
                         "\n![BLEU by length](bleu_by_length.svg)\n";
  save("results.md", markdown);
  std::cout << table;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a comparison report (Markdown, CSV, SVG, significance.json) of finished "
               "models from the files scripts/compare.sh keeps in the report folder, one folder "
               "per model, with every model's 95% confidence intervals and paired-bootstrap "
               "p-values against a baseline."};
  ReportOptions o;
  app.add_option("-o,--out", o.out, "report folder (holds <model>/training_summary.json, ...)")->required();
  app.add_option("--models", o.models, "model names, one folder each in the report folder")->required();
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
