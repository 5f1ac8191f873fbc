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
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/common.h"
#include "core/data/corpus.h"
#include "core/io/atomic_file.h"
#include "core/io/text_file.h"
#include "core/metrics/bleu.h"
#include "core/plot/svg.h"

namespace {

using namespace nmtzoo;
using nlohmann::json;

struct ModelResults {
  std::string name;
  std::string arch;
  int64_t parameters = 0;
  int64_t updates = 0;
  double wall_minutes = 0;
  double target_tokens_per_second = 0;
  std::map<std::string, double> bleu;  // by test set
  std::map<std::string, double> chrf;
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
  model.wall_minutes = get<double>(summary, "wall_seconds", summary_path) / 60;
  model.target_tokens_per_second = get<double>(summary, "target_tokens_per_second", summary_path);
  for (const auto& test : tests) {
    const std::string scores_path = fmt::format("{}/{}.scores.json", dir, test);
    for (const auto& score : read_json(scores_path)) {
      const auto metric = get<std::string>(score, "name", scores_path);
      (metric == "BLEU" ? model.bleu : model.chrf)[test] = get<double>(score, "score", scores_path);
    }
    if (!model.bleu.count(test) || !model.chrf.count(test)) {
      throw std::runtime_error(scores_path + ": needs a BLEU and a chrF score");
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
      model.valid_bleu.x.push_back(get<double>(record, "wall_seconds", where) / 60.0);
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

int run(const std::string& out, const std::vector<std::string>& names,
        const std::vector<std::string>& tests, const std::string& title,
        const std::string& data_dir, const std::string& src, const std::string& tgt) {
  std::vector<ModelResults> models;
  for (const auto& name : names) models.push_back(load_model(out, name, tests));
  std::string header = "| model | arch | parameters | updates | training time | training tokens/s |";
  std::string rule = "|---|---|---:|---:|---:|---:|";
  std::string csv = "model,arch,parameters,updates,train_minutes,train_tgt_tokens_per_second";
  for (const auto& test : tests) {
    header += fmt::format(" {} BLEU | {} chrF2 | {} sent/s |", test, test, test);
    rule += "---:|---:|---:|";
    csv += fmt::format(",{0}_bleu,{0}_chrf2,{0}_sentences_per_second", test);
  }
  std::string table = header + "\n" + rule + "\n";
  csv += "\n";
  for (const auto& m : models) {
    table += fmt::format("| {} | {} | {:.2f}M | {} | {:.1f} min | {:.0f} |", m.name, m.arch,
                         static_cast<double>(m.parameters) / 1e6, m.updates, m.wall_minutes,
                         m.target_tokens_per_second);
    csv += fmt::format("{},{},{},{},{:.2f},{:.0f}", m.name, m.arch, m.parameters, m.updates,
                       m.wall_minutes, m.target_tokens_per_second);
    for (const auto& test : tests) {
      table += fmt::format(" {:.2f} | {:.2f} | {:.1f} |", m.bleu.at(test), m.chrf.at(test),
                           m.sentences_per_second.at(test));
      csv += fmt::format(",{:.2f},{:.2f},{:.2f}", m.bleu.at(test), m.chrf.at(test),
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
                                                "wall-clock time (min)", "BLEU"));
  save("train_loss_vs_step.svg", line_chart_svg(loss_curves, "Training loss (label-smoothed)",
                                                "update step", "loss per target token"));
  save("results.csv", csv);
  const std::string by_length = bleu_by_length(models, tests, out, data_dir, src, tgt);
  std::string markdown = "# " + title + "\n\n" + table +
                         "\nBLEU and chrF2: nmtzoo-evaluate (sacreBLEU 2.3.1 definitions, cased, 13a), "
                         "averaged checkpoints, beam 5. Training time is wall-clock, validation "
                         "included; tokens/s counts non-pad target tokens while training.\n\n"
                         "![validation BLEU](valid_bleu_vs_time.svg)\n![training loss](train_loss_vs_step.svg)\n\n"
                         "## BLEU by source sentence length\n\n" + by_length +
                         "\n![BLEU by length](bleu_by_length.svg)\n";
  save("results.md", markdown);
  std::cout << table;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a comparison report (Markdown, CSV, SVG) of finished models from the files "
               "scripts/compare.sh keeps in the report folder, one folder per model."};
  std::string out;
  std::vector<std::string> models;
  std::vector<std::string> tests;
  std::string title = "Comparison";
  std::string data_dir = "data/multi30k";
  std::string src = "de";
  std::string tgt = "en";
  app.add_option("-o,--out", out, "report folder (holds <model>/training_summary.json, ...)")->required();
  app.add_option("--models", models, "model names, one folder each in the report folder")->required();
  app.add_option("--tests", tests, "test split names")->required();
  app.add_option("--title", title, "report title");
  app.add_option("--data", data_dir, "folder of the test sets")->capture_default_str();
  app.add_option("--src", src, "source language")->capture_default_str();
  app.add_option("--tgt", tgt, "target language")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(out, models, tests, title, data_dir, src, tgt); });
}
