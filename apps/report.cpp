// nmtzoo-report: gathers finished runs and their test scores into a comparison report: a
// Markdown table, a CSV, and learning curves of every run on shared axes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/common.h"
#include "core/data/corpus.h"
#include "core/io/text_file.h"
#include "core/metrics/bleu.h"
#include "core/plot/svg.h"
#include "core/train/checkpoint.h"
#include "core/train/runtime.h"
#include "models/encoder_decoder.h"

namespace {

using namespace nmtzoo;
namespace fs = std::filesystem;
using nlohmann::json;

struct Run {
  std::string name;
  std::string dir;
  int64_t parameters = 0;
  TrainingProgress progress;
  std::map<std::string, double> bleu;    // by test set
  std::map<std::string, double> chrf;
  std::map<std::string, double> sentences_per_second;
  PlotSeries valid_bleu;
  PlotSeries train_loss;
};

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  return json::parse(in);
}

Run load_run(const std::string& name, const std::string& dir, const std::string& scores_dir,
             const std::vector<std::string>& tests) {
  Run run;
  run.name = name;
  run.dir = dir;
  const std::string checkpoint = dir + "/averaged.pt";
  TrainedModel trained = load_trained_model(fs::exists(checkpoint) ? checkpoint
                                                                   : dir + "/checkpoints/checkpoint_last.pt",
                                            torch::kCPU);
  for (const auto& p : trained.model->parameters()) run.parameters += p.numel();
  run.progress = read_checkpoint_info(dir + "/checkpoints/checkpoint_last.pt").progress;
  for (const auto& test : tests) {
    for (const auto& score : read_json(fmt::format("{}/{}.{}.scores.json", scores_dir, name, test))) {
      std::string metric = score["name"];
      (metric == "BLEU" ? run.bleu : run.chrf)[test] = score["score"].get<double>();
    }
    json speed = read_json(fmt::format("{}/{}.{}.speed.json", scores_dir, name, test));
    run.sentences_per_second[test] = speed["sentences_per_second"];
  }
  run.valid_bleu.name = name;
  run.train_loss.name = name;
  for (const auto& line : read_lines(dir + "/metrics.jsonl")) {
    auto record = json::parse(line, nullptr, false);
    if (record.is_discarded()) continue;
    if (record["type"] == "valid" && record.contains("bleu")) {
      run.valid_bleu.x.push_back(record["wall_seconds"].get<double>() / 60.0);
      run.valid_bleu.y.push_back(record["bleu"]);
    } else if (record["type"] == "train") {
      run.train_loss.x.push_back(record["step"].get<double>());
      run.train_loss.y.push_back(record["loss"]);
    }
  }
  return run;
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
std::string bleu_by_length(const std::vector<Run>& runs, const std::vector<std::string>& tests,
                           const std::string& out, const std::string& data_dir,
                           const std::string& src, const std::string& tgt) {
  std::vector<std::vector<std::string>> bucket_sources(kBuckets);
  std::vector<int64_t> bucket_of;  // per pooled sentence
  std::vector<std::string> references;
  for (const auto& test : tests) {
    ParallelText text = read_parallel(fmt::format("{}/{}.{}.gz", data_dir, test, src),
                                      fmt::format("{}/{}.{}.gz", data_dir, test, tgt));
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
  for (const auto& r : runs) {
    std::vector<std::string> hypotheses;
    for (const auto& test : tests) {
      auto lines = read_lines(fmt::format("{}/{}.{}.hyp", out, r.name, test));
      hypotheses.insert(hypotheses.end(), lines.begin(), lines.end());
    }
    if (hypotheses.size() != references.size()) {
      throw std::runtime_error("hypotheses of " + r.name + " do not match the test sets' sizes");
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

int run(const std::string& out, const std::vector<std::string>& run_specs,
        const std::vector<std::string>& tests, const std::string& title,
        const std::string& data_dir, const std::string& src, const std::string& tgt) {
  std::vector<Run> runs;
  for (const auto& spec : run_specs) {
    auto equals = spec.find('=');
    if (equals == std::string::npos) throw std::runtime_error("--run takes NAME=RUN_DIR, got '" + spec + "'");
    runs.push_back(load_run(spec.substr(0, equals), spec.substr(equals + 1), out, tests));
  }
  std::string header = "| model | parameters | training time | training tokens/s |";
  std::string rule = "|---|---:|---:|---:|";
  std::string csv = "model,parameters,train_minutes,train_tgt_tokens_per_second,updates";
  for (const auto& test : tests) {
    header += fmt::format(" {} BLEU | {} chrF2 | {} sent/s |", test, test, test);
    rule += "---:|---:|---:|";
    csv += fmt::format(",{0}_bleu,{0}_chrf2,{0}_sentences_per_second", test);
  }
  std::string table = header + "\n" + rule + "\n";
  csv += "\n";
  for (const auto& r : runs) {
    const double tokens_per_second =
        static_cast<double>(r.progress.tokens_seen) / std::max(1e-9, r.progress.train_seconds);
    table += fmt::format("| {} | {:.2f}M | {:.1f} min | {:.0f} |", r.name,
                         static_cast<double>(r.parameters) / 1e6, r.progress.wall_seconds / 60,
                         tokens_per_second);
    csv += fmt::format("{},{},{:.2f},{:.0f},{}", r.name, r.parameters, r.progress.wall_seconds / 60,
                       tokens_per_second, r.progress.step);
    for (const auto& test : tests) {
      table += fmt::format(" {:.2f} | {:.2f} | {:.1f} |", r.bleu.at(test), r.chrf.at(test),
                           r.sentences_per_second.at(test));
      csv += fmt::format(",{:.2f},{:.2f},{:.2f}", r.bleu.at(test), r.chrf.at(test),
                         r.sentences_per_second.at(test));
    }
    table += "\n";
    csv += "\n";
  }
  std::vector<PlotSeries> bleu_curves, loss_curves;
  for (const auto& r : runs) {
    bleu_curves.push_back(r.valid_bleu);
    loss_curves.push_back(r.train_loss);
  }
  auto save = [&](const std::string& name, const std::string& text) {
    write_file_atomically(out + "/" + name, [&](std::ostream& stream) { stream << text; });
  };
  save("valid_bleu_vs_time.svg", line_chart_svg(bleu_curves, "Validation BLEU (greedy) during training",
                                                "wall-clock time (min)", "BLEU"));
  save("train_loss_vs_step.svg", line_chart_svg(loss_curves, "Training loss (label-smoothed)",
                                                "update step", "loss per target token"));
  save("results.csv", csv);
  const std::string by_length = bleu_by_length(runs, tests, out, data_dir, src, tgt);
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
  CLI::App app{"Write a comparison report (Markdown, CSV, SVG) for finished runs whose test scores "
               "scripts/compare.sh put into the output folder."};
  std::string out;
  std::vector<std::string> runs;
  std::vector<std::string> tests;
  std::string title = "Comparison";
  std::string data_dir = "data/multi30k";
  std::string src = "de";
  std::string tgt = "en";
  app.add_option("-o,--out", out, "report folder (holds <name>.<test>.scores.json)")->required();
  app.add_option("--run", runs, "NAME=RUN_DIR, once per model")->required();
  app.add_option("--tests", tests, "test split names")->required();
  app.add_option("--title", title, "report title");
  app.add_option("--data", data_dir, "folder of the test sets")->capture_default_str();
  app.add_option("--src", src, "source language")->capture_default_str();
  app.add_option("--tgt", tgt, "target language")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(out, runs, tests, title, data_dir, src, tgt); });
}
