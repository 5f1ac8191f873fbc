// SPDX-License-Identifier: MIT
#include "torch_free/config/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace nmtzoo {

namespace fs = std::filesystem;

std::string RunConfig::run_dir() const {
  if (!training.output_dir.empty()) return training.output_dir;
  std::string stem = source.empty() ? "default" : fs::path(source).stem().string();
  return (fs::path("runs") / stem).string();
}

std::string RunConfig::tokenizer_model(const std::string& lang) const {
  std::string prefix =
      tokenizer.prefix.empty() ? (fs::path(run_dir()) / "spm").string() : tokenizer.prefix;
  return tokenizer.joint ? prefix + ".model" : prefix + "." + lang + ".model";
}

std::string target_language_tag(const std::string& lang) { return "<2" + lang + ">"; }

std::vector<LanguagePair> RunConfig::language_pairs() const {
  if (data.directions.empty()) return {{data.src_lang, data.tgt_lang}};
  std::vector<LanguagePair> pairs;
  for (const auto& direction : data.directions) {
    const size_t dash = direction.find('-');
    pairs.push_back(
        {direction.substr(0, dash), dash == std::string::npos ? "" : direction.substr(dash + 1)});
  }
  return pairs;
}

std::vector<std::string> RunConfig::target_languages() const {
  std::vector<std::string> languages;
  for (const auto& pair : language_pairs()) {
    if (std::find(languages.begin(), languages.end(), pair.tgt) == languages.end())
      languages.push_back(pair.tgt);
  }
  return languages;
}

std::string RunConfig::corpus_path(const std::string& split, const std::string& lang) const {
  fs::path plain = fs::path(data.dir) / (split + "." + lang);
  fs::path gzipped = plain;
  gzipped += ".gz";
  std::error_code ec;
  return (fs::exists(gzipped, ec) || !fs::exists(plain, ec)) ? gzipped.string() : plain.string();
}

std::string RunConfig::dataset_dir() const {
  return data.bin_dir.empty() ? (fs::path(run_dir()) / "data-bin").string() : data.bin_dir;
}

std::string RunConfig::where(const std::string& key) const {
  auto it = origin.find(key);
  return it == origin.end() ? (source.empty() ? "default" : source + ": default") : it->second;
}

std::vector<KeyProblem> TokenizerConfig::validate() const {
  std::vector<KeyProblem> problems;
  if (model_type == SubwordModel::kBpe && sampling_alpha >= 1.0) {
    problems.push_back(
        {"sampling_alpha", fmt::format("({}) is BPE-dropout's probability of dropping "
                                       "a merge, so it must be below 1",
                                       sampling_alpha)});
  }
  return problems;
}

std::vector<KeyProblem> TrainConfig::validate() const {
  std::vector<KeyProblem> problems;
  if (best_metric != SelectionMetric::kLoss && !valid_bleu) {
    problems.push_back(
        {"best_metric", fmt::format("is {}, which needs valid_bleu: true (it decodes "
                                    "the validation set)",
                                    selection_metric_name(best_metric))});
  }
  if ((schedule == LrSchedule::kLinear || schedule == LrSchedule::kCosine) && max_steps == 0 &&
      max_time == 0 && max_epochs == 0) {
    problems.push_back({"schedule",
                        "decays the rate over the run's budget, which needs max_steps, "
                        "max_time or max_epochs"});
  }
  return problems;
}

std::vector<KeyProblem> DecodeConfig::validate() const {
  std::vector<KeyProblem> problems;
  if (!sampling && nbest > beam) {
    problems.push_back({"nbest", fmt::format("({}) exceeds beam ({})", nbest, beam)});
  }
  if (sampling && constraints != ConstraintMode::kNone) {
    problems.push_back(
        {"constraints", "need beam search, but sampling is true (constraints steer a beam)"});
  }
  if (bf16 && dtype == DecodeDtype::kInt8) {
    problems.push_back({"bf16", "is true but dtype is int8: set only dtype"});
  }
  return problems;
}

}  // namespace nmtzoo
