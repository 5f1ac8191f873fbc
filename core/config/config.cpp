#include "core/config/config.h"

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
  std::string prefix = tokenizer.prefix.empty() ? (fs::path(run_dir()) / "spm").string()
                                                : tokenizer.prefix;
  return tokenizer.joint ? prefix + ".model" : prefix + "." + lang + ".model";
}

std::string target_language_tag(const std::string& lang) { return "<2" + lang + ">"; }

std::vector<LanguagePair> RunConfig::language_pairs() const {
  if (data.directions.empty()) return {{data.src_lang, data.tgt_lang}};
  std::vector<LanguagePair> pairs;
  for (const auto& direction : data.directions) {
    const size_t dash = direction.find('-');
    pairs.push_back({direction.substr(0, dash), dash == std::string::npos ? "" : direction.substr(dash + 1)});
  }
  return pairs;
}

std::vector<std::string> RunConfig::target_languages() const {
  std::vector<std::string> languages;
  for (const auto& pair : language_pairs()) {
    if (std::find(languages.begin(), languages.end(), pair.tgt) == languages.end()) languages.push_back(pair.tgt);
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

}  // namespace nmtzoo
