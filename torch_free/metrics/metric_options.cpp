// SPDX-License-Identifier: MIT
#include "torch_free/metrics/metric_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "torch_free/io/text_file.h"

namespace nmtzoo {

std::vector<std::string> metric_order(const std::vector<std::string>& requested, bool sorted) {
  std::vector<std::string> names;
  for (const auto& name : requested) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (sorted) std::sort(names.begin(), names.end());
  return names;
}

std::string bleu_tokenizer_name(const MetricOptions& options, std::ostream& warnings) {
  std::string target;
  if (!options.language_pair.empty()) {
    size_t dash = options.language_pair.find('-');
    if (dash == std::string::npos) {
      throw IoError("--language-pair '" + options.language_pair + "' is not of the form SRC-TRG");
    }
    target = options.language_pair.substr(dash + 1);
  }
  const std::map<std::string, std::string> by_language = {
      {"zh", "zh"}, {"ja", "ja-mecab"}, {"ko", "ko-mecab"}};
  auto best = by_language.find(target);
  if (!options.tokenize) {
    if (best == by_language.end()) return "13a";
    if (best->second != "zh") {
      throw IoError(
          fmt::format("-l {} selects sacreBLEU's {} tokenizer, which needs MeCab and is not in "
                      "nmtzoo-evaluate; choose one with --tokenize (13a, intl, char, none, zh)",
                      options.language_pair, best->second));
    }
    return best->second;
  }
  if (best != by_language.end() && *options.tokenize != best->second && !options.quiet) {
    const char* language = target == "zh" ? "Chinese" : target == "ja" ? "Japanese" : "Korean";
    warnings << fmt::format("nmtzoo-evaluate: consider using the '{}' or 'spm' tokenizer for {}.\n",
                            best->second, language);
  }
  return *options.tokenize;
}

std::unique_ptr<ResampledMetric> make_metric(const std::string& name, const MetricOptions& options,
                                             std::ostream& warnings) {
  if (name == "bleu") {
    BleuOptions bleu;
    bleu.tokenizer = parse_bleu_tokenizer(bleu_tokenizer_name(options, warnings));
    bleu.smooth = parse_bleu_smooth(options.smooth_method);
    bleu.smooth_value = options.smooth_value;
    bleu.lowercase = options.lowercase;
    bleu.effective_order = options.sentence_level;
    return make_resampled_metric(bleu);
  }
  if (name == "chrf") {
    ChrfOptions chrf;
    chrf.char_order = options.chrf_char_order;
    chrf.word_order = options.chrf_word_order;
    chrf.beta = options.chrf_beta;
    chrf.lowercase = options.chrf_lowercase;
    chrf.whitespace = options.chrf_whitespace;
    chrf.eps_smoothing = options.chrf_eps_smoothing;
    return make_resampled_metric(chrf);
  }
  TerOptions ter;
  ter.case_sensitive = options.ter_case_sensitive;
  ter.asian_support = options.ter_asian_support;
  ter.no_punct = options.ter_no_punct;
  ter.normalized = options.ter_normalized;
  return make_resampled_metric(ter);
}

void warn_if_tokenized(const TextStream& hypotheses, const MetricOptions& options,
                       std::ostream& warnings) {
  if (options.force || options.quiet) return;
  auto count =
      std::count_if(hypotheses.lines.begin(), hypotheses.lines.end(), [](const std::string& line) {
        return line.size() >= 2 && line.compare(line.size() - 2, 2, " .") == 0;
      });
  if (count >= 100) {
    warnings << "nmtzoo-evaluate: " << hypotheses.name << ": " << count
             << " lines end in a tokenized period (' .'); the output looks tokenized, which lowers "
                "BLEU. Detokenize it, or pass --force.\n";
  }
}

}  // namespace nmtzoo
