// SPDX-License-Identifier: MIT
// The metrics of nmtzoo-evaluate built from sacreBLEU's command-line options: the metric names in
// the order sacreBLEU scores them, BLEU's tokenizer chosen from --tokenize and -l, and the
// warnings sacreBLEU gives about them.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "torch_free/metrics/evaluation_input.h"
#include "torch_free/metrics/significance.h"

namespace nmtzoo {

struct MetricOptions {
  std::optional<std::string> tokenize;  // unset: 13a, or what -l's target language asks for
  std::string language_pair;            // "SRC-TRG", or empty
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool lowercase = false;  // BLEU only, as in sacreBLEU
  bool force = false;      // no warning about output that looks tokenized
  int chrf_char_order = 6;
  int chrf_word_order = 0;
  int chrf_beta = 2;
  bool chrf_whitespace = false;
  bool chrf_lowercase = false;
  bool chrf_eps_smoothing = false;
  bool ter_case_sensitive = false;
  bool ter_asian_support = false;
  bool ter_no_punct = false;
  bool ter_normalized = false;
  bool sentence_level = false;  // BLEU with effective order, as sacreBLEU scores sentences
  bool quiet = false;           // no warnings
};

// The metrics as asked, without repeats; `sorted` (all modes but the paired tests) sorts them
// (bleu, chrf, ter).
std::vector<std::string> metric_order(const std::vector<std::string>& requested, bool sorted);

// BLEU.__init__'s choice: --tokenize if given, else by -l's target language (zh -> zh, ja ->
// ja-mecab, ko -> ko-mecab), else 13a. A MeCab tokenizer is an IoError; a mismatch between
// --tokenize and -l is sacreBLEU's warning on `warnings` (unless quiet).
std::string bleu_tokenizer_name(const MetricOptions& options, std::ostream& warnings);

// "bleu", "chrf" or "ter" with the options; BLEU's warnings go to `warnings`.
std::unique_ptr<ResampledMetric> make_metric(const std::string& name, const MetricOptions& options,
                                             std::ostream& warnings);

// sacreBLEU's warning for output that looks tokenized (BLEU without --force or --quiet): 100 or
// more lines ending in " .".
void warn_if_tokenized(const TextStream& hypotheses, const MetricOptions& options,
                       std::ostream& warnings);

}  // namespace nmtzoo
