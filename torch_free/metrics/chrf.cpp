// SPDX-License-Identifier: MIT
#include "torch_free/metrics/chrf.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

using Counts = std::unordered_map<std::string, int64_t>;

// string.punctuation, the set chrf.py splits off word edges.
bool is_ascii_punctuation(std::string_view piece) {
  static constexpr std::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  return piece.size() == 1 && kPunctuation.find(piece[0]) != std::string_view::npos;
}

// Character n-gram counts of orders 1..max_order, over code points; without `whitespace` the
// text's words are concatenated first (''.join(line.split())).
std::vector<Counts> char_ngrams(const std::string& text, int max_order, bool whitespace) {
  std::string joined;
  if (whitespace) {
    joined = text;
  } else {
    joined.reserve(text.size());
    for (std::string_view word : split_whitespace(text)) joined.append(word);
  }
  std::vector<std::string_view> chars = split_code_points(joined);
  std::vector<Counts> counts(static_cast<size_t>(max_order));
  for (size_t n = 1; n <= counts.size(); ++n) {
    for (size_t start = 0; start + n <= chars.size(); ++start) {
      const char* begin = chars[start].data();
      const char* end = chars[start + n - 1].data() + chars[start + n - 1].size();
      ++counts[n - 1][std::string(begin, end)];
    }
  }
  return counts;
}

Counts word_ngrams(const std::vector<std::string>& words, size_t n) {
  Counts counts;
  std::string key;
  for (size_t start = 0; start + n <= words.size(); ++start) {
    key = words[start];
    for (size_t k = 1; k < n; ++k) key += " " + words[start + k];
    ++counts[key];
  }
  return counts;
}

// All n-gram counts of one (lowercased if asked) segment: characters, then words.
std::vector<Counts> all_ngrams(const std::string& segment, const ChrfOptions& options) {
  std::vector<Counts> counts = char_ngrams(segment, options.char_order, options.whitespace);
  if (options.word_order > 0) {
    std::vector<std::string> words = chrf_words(segment);
    for (int n = 1; n <= options.word_order; ++n) {
      counts.push_back(word_ngrams(words, static_cast<size_t>(n)));
    }
  }
  return counts;
}

}  // namespace

std::vector<std::string> chrf_words(const std::string& text) {
  std::vector<std::string> words;
  for (std::string_view word : split_whitespace(text)) {
    std::vector<std::string_view> chars = split_code_points(word);
    if (chars.size() == 1) {
      words.emplace_back(word);
    } else if (is_ascii_punctuation(chars.back())) {
      words.emplace_back(word.substr(0, word.size() - 1));
      words.emplace_back(chars.back());
    } else if (is_ascii_punctuation(chars.front())) {
      words.emplace_back(chars.front());
      words.emplace_back(word.substr(1));
    } else {
      words.emplace_back(word);
    }
  }
  return words;
}

std::string ChrfScore::name() const {
  return "chrF" + std::to_string(beta) + std::string(static_cast<size_t>(word_order), '+');
}

std::string ChrfScore::format(int width, const std::string& signature) const {
  return format_score_line(name(), score, width, signature, "");
}

Chrf::Chrf(ChrfOptions options) : options_(options) {
  if (options_.char_order < 0 || options_.word_order < 0 ||
      options_.char_order + options_.word_order == 0) {
    throw MetricError("chrF needs a positive character or word n-gram order");
  }
}

namespace {

// chrf.py's _compute_f_score, operation for operation so that ties between references and the
// last digits come out as in Python. `Number` is the type sacreBLEU's statistics have on the path
// taken: Python ints (double here: precision and recall are true divisions), or the numpy
// float32 scalars of bootstrap resampling, whose precision and recall are float32 quotients that
// the rest of the formula (Python ints and floats mixed in) widens to float64.
template <typename Number>
double f_score_of(const ChrfOptions& options, const Number* stats) {
  const double eps = 1e-16;
  const int order = options.char_order + options.word_order;
  const double factor = static_cast<double>(options.beta) * options.beta;
  double score = 0.0;
  double avg_prec = 0.0;
  double avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    const Number n_hyp = stats[3 * i];
    const Number n_ref = stats[3 * i + 1];
    const Number n_match = stats[3 * i + 2];
    const double prec = n_hyp > 0 ? static_cast<double>(Number(n_match / n_hyp)) : eps;
    const double rec = n_ref > 0 ? static_cast<double>(Number(n_match / n_ref)) : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * score / order;
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0.0) {
    score = (1 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    return 100 * score;
  }
  return 0.0;
}

}  // namespace

double Chrf::f_score(const ChrfStats& stats) const {
  std::vector<double> values(stats.begin(), stats.end());
  return f_score_of(options_, values.data());
}

double Chrf::f_score(const double* stats) const { return f_score_of(options_, stats); }

double Chrf::f_score_float32(const float* stats) const { return f_score_of(options_, stats); }

ChrfStats Chrf::segment_stats(const std::string& hypothesis,
                              const std::vector<std::string>& references) const {
  std::vector<Counts> hyp_ngrams =
      all_ngrams(options_.lowercase ? lowercase(hypothesis) : hypothesis, options_);
  ChrfStats best_stats;
  double best_f = -1.0;
  for (const auto& reference : references) {
    std::vector<Counts> ref_ngrams =
        all_ngrams(options_.lowercase ? lowercase(reference) : reference, options_);
    ChrfStats stats;
    stats.reserve(3 * hyp_ngrams.size());
    for (size_t k = 0; k < hyp_ngrams.size(); ++k) {
      int64_t hyp_count = 0;
      int64_t match_count = 0;
      for (const auto& [ngram, count] : hyp_ngrams[k]) {
        hyp_count += count;
        auto it = ref_ngrams[k].find(ngram);
        if (it != ref_ngrams[k].end()) match_count += std::min(count, it->second);
      }
      int64_t ref_count = 0;
      for (const auto& entry : ref_ngrams[k]) ref_count += entry.second;
      stats.push_back(ref_ngrams[k].empty() ? 0 : hyp_count);  // no reference n-gram: no hits
      stats.push_back(ref_count);
      stats.push_back(match_count);
    }
    double f = f_score(stats);
    if (f > best_f) {
      best_f = f;
      best_stats = std::move(stats);
    }
  }
  return best_stats;
}

ChrfScore Chrf::score_from_stats(const ChrfStats& stats) const {
  ChrfScore score;
  score.score = f_score(stats);
  score.char_order = options_.char_order;
  score.word_order = options_.word_order;
  score.beta = options_.beta;
  return score;
}

std::string Chrf::signature(int num_refs, bool short_form) const {
  std::string nrefs = num_refs < 0 ? "var" : std::to_string(num_refs);
  return fmt::format(short_form ? "#:{}|c:{}|e:{}|nc:{}|nw:{}|s:{}|v:{}"
                                : "nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{}",
                     nrefs, options_.lowercase ? "lc" : "mixed",
                     options_.eps_smoothing ? "no" : "yes", options_.char_order,
                     options_.word_order, options_.whitespace ? "yes" : "no", kSignatureVersion);
}

}  // namespace nmtzoo
