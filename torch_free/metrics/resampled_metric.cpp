// SPDX-License-Identifier: MIT
#include "torch_free/metrics/resampled_metric.h"

#include <cmath>

namespace nmtzoo {
namespace {

// Row-major statistics: append_row(hypothesis, its references, rows) appends one segment's.
template <typename AppendRow>
std::vector<double> statistics_rows(const std::vector<std::string>& hypotheses,
                                    const ReferenceStreams& references, size_t width,
                                    const AppendRow& append_row) {
  int num_refs = 0;
  const auto segments = references_by_segment(references, hypotheses.size(), &num_refs);
  std::vector<double> rows;
  rows.reserve(hypotheses.size() * width);
  for (size_t i = 0; i < hypotheses.size(); ++i) append_row(hypotheses[i], segments[i], rows);
  return rows;
}

class TestedBleu : public ResampledMetric {
 public:
  explicit TestedBleu(const BleuOptions& options) : bleu_(options) {
    BleuOptions truncated = options;
    if (options.smooth == BleuSmooth::kAddK) {
      // numpy int64 rows: `correct[n - 1] += smooth_value` stores int(correct + smooth_value).
      truncated.smooth_value = std::trunc(options.smooth_value.value_or(1.0));
    }
    integer_rows_bleu_ = Bleu(truncated);
  }
  std::string name() const override { return "BLEU"; }
  size_t statistics_size() const override { return 2 + 2 * kBleuMaxOrder; }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             const BleuStats stats = bleu_.segment_stats(hypothesis, refs);
                             rows.push_back(static_cast<double>(stats.sys_len));
                             rows.push_back(static_cast<double>(stats.ref_len));
                             for (int64_t n : stats.correct) rows.push_back(static_cast<double>(n));
                             for (int64_t n : stats.total) rows.push_back(static_cast<double>(n));
                           });
  }
  double score(const double* sums, bool integer_rows) const override {
    return (integer_rows ? integer_rows_bleu_ : bleu_).score_from_stats(to_stats(sums)).score;
  }
  // float32 sums of integer statistics are integers, and compute_bleu widens everything it divides
  // with a Python float first: the double arithmetic of the integer path.
  double score_float32(const float* sums) const override {
    std::vector<double> values(sums, sums + statistics_size());
    return score(values.data(), false);
  }
  std::string signature(int num_refs, bool short_form) const override {
    return bleu_.signature(num_refs, short_form);
  }
  std::string verbose(const double* sums) const override {
    return bleu_.score_from_stats(to_stats(sums)).verbose();
  }

 private:
  static BleuStats to_stats(const double* sums) {
    BleuStats stats;
    stats.sys_len = static_cast<int64_t>(sums[0]);
    stats.ref_len = static_cast<int64_t>(sums[1]);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      stats.correct[n] = static_cast<int64_t>(sums[2 + n]);
      stats.total[n] = static_cast<int64_t>(sums[2 + kBleuMaxOrder + n]);
    }
    return stats;
  }
  Bleu bleu_;
  Bleu integer_rows_bleu_;
};

class TestedChrf : public ResampledMetric {
 public:
  explicit TestedChrf(const ChrfOptions& options) : chrf_(options) {}
  std::string name() const override {
    ChrfScore score;
    score.char_order = chrf_.options().char_order;
    score.word_order = chrf_.options().word_order;
    score.beta = chrf_.options().beta;
    return score.name();
  }
  size_t statistics_size() const override {
    return static_cast<size_t>(3 * (chrf_.options().char_order + chrf_.options().word_order));
  }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             for (int64_t n : chrf_.segment_stats(hypothesis, refs)) {
                               rows.push_back(static_cast<double>(n));
                             }
                           });
  }
  double score(const double* sums, bool /*integer_rows*/) const override {
    return chrf_.f_score(sums);
  }
  double score_float32(const float* sums) const override { return chrf_.f_score_float32(sums); }
  std::string signature(int num_refs, bool short_form) const override {
    return chrf_.signature(num_refs, short_form);
  }

 private:
  Chrf chrf_;
};

class TestedTer : public ResampledMetric {
 public:
  explicit TestedTer(const TerOptions& options) : ter_(options) {}
  std::string name() const override { return "TER"; }
  size_t statistics_size() const override { return 2; }
  std::vector<double> segment_statistics(const std::vector<std::string>& hypotheses,
                                         const ReferenceStreams& references) const override {
    return statistics_rows(hypotheses, references, statistics_size(),
                           [&](const std::string& hypothesis, const std::vector<std::string>& refs,
                               std::vector<double>& rows) {
                             const TerStats stats = ter_.segment_stats(hypothesis, refs);
                             rows.push_back(stats.edits);
                             rows.push_back(stats.ref_length);
                           });
  }
  double score(const double* sums, bool /*integer_rows*/) const override {
    return ter_.score_from_stats(TerStats{sums[0], sums[1]}).score;
  }
  // TER._compute_score_from_stats on float32: edits / length is a float32 quotient, and 100 * it
  // a float64 product.
  double score_float32(const float* sums) const override {
    const float edits = sums[0];
    const float length = sums[1];
    double rate = 0.0;
    if (length > 0) {
      rate = static_cast<double>(edits / length);
    } else if (edits > 0) {
      rate = 1.0;
    }
    return 100 * rate;
  }
  std::string signature(int num_refs, bool short_form) const override {
    return ter_.signature(num_refs, short_form);
  }

 private:
  Ter ter_;
};

}  // namespace

std::unique_ptr<ResampledMetric> make_resampled_metric(const BleuOptions& options) {
  return std::make_unique<TestedBleu>(options);
}
std::unique_ptr<ResampledMetric> make_resampled_metric(const ChrfOptions& options) {
  return std::make_unique<TestedChrf>(options);
}
std::unique_ptr<ResampledMetric> make_resampled_metric(const TerOptions& options) {
  return std::make_unique<TestedTer>(options);
}

std::vector<double> sum_statistics(const std::vector<double>& statistics, size_t width) {
  std::vector<double> sums(width, 0.0);
  for (size_t start = 0; start < statistics.size(); start += width) {
    for (size_t k = 0; k < width; ++k) sums[k] += statistics[start + k];
  }
  return sums;
}

}  // namespace nmtzoo
