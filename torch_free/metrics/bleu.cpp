// SPDX-License-Identifier: MIT
#include "torch_free/metrics/bleu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

// Counts of the n-grams of each order 1..kBleuMaxOrder, keyed by their tokens joined with spaces
// (unambiguous: tokens never contain whitespace).
using NgramCounts = std::array<std::unordered_map<std::string, int64_t>, kBleuMaxOrder>;

NgramCounts count_ngrams(const std::vector<std::string_view>& tokens) {
  NgramCounts counts;
  std::string key;
  for (size_t start = 0; start < tokens.size(); ++start) {
    key.clear();
    for (size_t n = 0; n < static_cast<size_t>(kBleuMaxOrder) && start + n < tokens.size(); ++n) {
      if (n > 0) key.push_back(' ');
      key.append(tokens[start + n]);
      ++counts[n][key];
    }
  }
  return counts;
}

const char* smooth_name(BleuSmooth smooth) {
  switch (smooth) {
    case BleuSmooth::kNone:
      return "none";
    case BleuSmooth::kFloor:
      return "floor";
    case BleuSmooth::kAddK:
      return "add-k";
    case BleuSmooth::kExp:
      return "exp";
  }
  return "?";
}

// BLEU.SMOOTH_DEFAULTS; nullopt for the methods that take no value.
std::optional<double> default_smooth_value(BleuSmooth smooth) {
  if (smooth == BleuSmooth::kFloor) return 0.1;
  if (smooth == BleuSmooth::kAddK) return 1.0;
  return std::nullopt;
}

// utils.my_log: log, with log(0) floored at -9999999999.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuSmooth parse_bleu_smooth(const std::string& name) {
  for (auto smooth : {BleuSmooth::kNone, BleuSmooth::kFloor, BleuSmooth::kAddK, BleuSmooth::kExp}) {
    if (name == smooth_name(smooth)) return smooth;
  }
  throw MetricError("unknown BLEU smoothing method '" + name + "' (none, floor, add-k, exp)");
}

std::string to_string(BleuSmooth smooth) { return smooth_name(smooth); }

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

std::string BleuScore::verbose() const {
  std::string text;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    if (n > 0) text.push_back('/');
    text += fmt::format("{:.1f}", precisions[n]);
  }
  text += fmt::format(" (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})", bp, ratio, sys_len,
                      ref_len);
  return text;
}

std::string BleuScore::format(int width, const std::string& signature) const {
  return format_score_line("BLEU", score, width, signature, verbose());
}

int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1;
  int64_t closest_len = -1;
  for (int64_t ref_len : ref_lens) {
    int64_t diff = std::abs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

BleuScore compute_bleu(const BleuStats& stats, BleuSmooth smooth,
                       std::optional<double> smooth_value, bool effective_order) {
  if (!smooth_value) smooth_value = default_smooth_value(smooth);
  BleuScore result;
  result.sys_len = stats.sys_len;
  result.ref_len = stats.ref_len;
  result.counts = stats.correct;
  result.totals = stats.total;
  result.ratio = stats.ref_len != 0
                     ? static_cast<double>(stats.sys_len) / static_cast<double>(stats.ref_len)
                     : 0.0;
  if (stats.sys_len < stats.ref_len) {
    result.bp = stats.sys_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) /
                                                       static_cast<double>(stats.sys_len))
                                  : 0.0;
  } else {
    result.bp = 1.0;
  }
  // No match of any order: 0 whatever the smoothing (sacreBLEU issue #141).
  if (std::all_of(stats.correct.begin(), stats.correct.end(), [](int64_t c) { return c == 0; })) {
    return result;
  }
  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 1; n <= kBleuMaxOrder; ++n) {
    double correct = static_cast<double>(stats.correct[n - 1]);
    double total = static_cast<double>(stats.total[n - 1]);
    if (smooth == BleuSmooth::kAddK && n > 1) {
      correct += *smooth_value;
      total += *smooth_value;
    }
    if (total == 0.0) break;
    if (effective_order) eff_order = n;
    double& precision = result.precisions[n - 1];
    if (correct == 0.0) {
      if (smooth == BleuSmooth::kExp) {
        smooth_mteval *= 2.0;
        precision = 100.0 / (smooth_mteval * total);
      } else if (smooth == BleuSmooth::kFloor) {
        precision = 100.0 * *smooth_value / total;
      }
    } else {
      precision = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += floored_log(result.precisions[n]);
  result.score = result.bp * std::exp(log_sum / eff_order);
  return result;
}

Bleu::Bleu(BleuOptions options) : options_(options) {}

std::string Bleu::preprocess(std::string_view segment) const {
  if (options_.lowercase) {
    std::string lower = lowercase(segment);
    return tokenize_bleu(rstrip_whitespace(lower), options_.tokenizer);
  }
  return tokenize_bleu(rstrip_whitespace(segment), options_.tokenizer);
}

BleuStats Bleu::segment_stats(const std::string& hypothesis,
                              const std::vector<std::string>& references) const {
  // Reference n-grams: the maximum count of each over the references.
  NgramCounts ref_ngrams;
  std::vector<int64_t> ref_lens;
  for (const auto& reference : references) {
    std::string tokenized = preprocess(reference);
    std::vector<std::string_view> tokens = split_whitespace(tokenized);
    ref_lens.push_back(static_cast<int64_t>(tokens.size()));
    NgramCounts counts = count_ngrams(tokens);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      for (auto& [ngram, count] : counts[n]) {
        int64_t& best = ref_ngrams[n][ngram];
        best = std::max(best, count);
      }
    }
  }
  std::string tokenized = preprocess(hypothesis);
  std::vector<std::string_view> tokens = split_whitespace(tokenized);
  BleuStats stats;
  stats.sys_len = static_cast<int64_t>(tokens.size());
  stats.ref_len = closest_ref_len(stats.sys_len, ref_lens);
  NgramCounts hyp_ngrams = count_ngrams(tokens);
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    for (const auto& [ngram, count] : hyp_ngrams[n]) {
      stats.total[n] += count;
      auto match = ref_ngrams[n].find(ngram);
      if (match != ref_ngrams[n].end()) stats.correct[n] += std::min(count, match->second);
    }
  }
  return stats;
}

BleuScore Bleu::score_from_stats(const BleuStats& stats) const {
  return compute_bleu(stats, options_.smooth, options_.smooth_value, options_.effective_order);
}

std::string Bleu::signature(int num_refs, bool short_form) const {
  std::string smooth = smooth_name(options_.smooth);
  if (auto fallback = default_smooth_value(options_.smooth)) {
    smooth += fmt::format("[{:.2f}]", options_.smooth_value.value_or(*fallback));
  }
  std::string nrefs = num_refs < 0 ? "var" : std::to_string(num_refs);
  return fmt::format(short_form ? "#:{}|c:{}|e:{}|tok:{}|s:{}|v:{}"
                                : "nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}",
                     nrefs, options_.lowercase ? "lc" : "mixed",
                     options_.effective_order ? "yes" : "no", to_string(options_.tokenizer), smooth,
                     kSignatureVersion);
}

BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        BleuOptions options) {
  return Bleu(options).sentence_score(hypothesis, references);
}

}  // namespace nmtzoo
