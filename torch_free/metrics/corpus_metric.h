// SPDX-License-Identifier: MIT
// What BLEU, chrF and TER share, as sacreBLEU's Metric (sacrebleu/metrics/base.py): a metric
// reduces each segment to sufficient statistics, sums them over the corpus and computes the score
// from the sums alone, so a corpus score, a sentence score and the resampled scores of the
// significance tests are one computation.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmtzoo {

// The sacreBLEU release whose behaviour torch_free/metrics reproduces, and the `version` written in
// every signature: "+nmtzoo" marks scores computed by this C++ port rather than by sacreBLEU.
inline constexpr char kSacrebleuVersion[] = "2.6.0";
inline constexpr char kSignatureVersion[] = "2.6.0+nmtzoo";

// Bad metric input or options, e.g. reference streams of another length than the hypotheses.
struct MetricError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The references of each segment: throws MetricError when there is no stream or a stream's length
// differs from `num_segments`. `*num_refs` (if given) receives the number of streams.
std::vector<std::vector<std::string>> references_by_segment(
    const std::vector<std::vector<std::string>>& references, size_t num_segments, int* num_refs);

// One segment's references as streams of one segment each (sacreBLEU's sentence_score passes
// [[r] for r in refs]).
std::vector<std::vector<std::string>> single_segment_streams(
    const std::vector<std::string>& references);

// sacreBLEU's Score.format: "NAME = SCORE VERBOSE", or "NAME|SIGNATURE = SCORE VERBOSE".
std::string format_score_line(const std::string& name, double score, int width,
                              const std::string& signature, const std::string& verbose);

// Adds one segment's statistics to a running sum: `+=` for statistics structs, element-wise for
// statistics held as a vector of counts (an empty sum takes the first vector's length).
template <class Stats>
void add_stats(Stats& sum, const Stats& stats) {
  sum += stats;
}
inline void add_stats(std::vector<int64_t>& sum, const std::vector<int64_t>& stats) {
  if (sum.size() < stats.size()) sum.resize(stats.size(), 0);
  for (size_t k = 0; k < stats.size(); ++k) sum[k] += stats[k];
}

// The scoring sacreBLEU's Metric writes once for every metric: the base a new metric derives from
// (Bleu, Chrf, Ter), with no virtual call per segment. `Derived` provides
//   Stats segment_stats(const std::string& hypothesis, const std::vector<std::string>& references)
//   Score score_from_stats(const Stats& sums)
// and `Score` has a `num_refs` member.
template <class Derived, class Stats, class Score>
class CorpusMetric {
 public:
  // Metric._extract_corpus_statistics: the statistics of every segment, in order.
  // `references[r][i]` is reference stream r's i-th segment; every stream has one segment per
  // hypothesis (a MetricError otherwise). An empty reference segment is a reference of no tokens,
  // as in sacreBLEU since 2.2.0.
  std::vector<Stats> corpus_stats(const std::vector<std::string>& hypotheses,
                                  const std::vector<std::vector<std::string>>& references) const {
    const auto segments = references_by_segment(references, hypotheses.size(), nullptr);
    std::vector<Stats> stats;
    stats.reserve(hypotheses.size());
    for (size_t i = 0; i < hypotheses.size(); ++i) {
      stats.push_back(derived().segment_stats(hypotheses[i], segments[i]));
    }
    return stats;
  }

  // Metric.corpus_score: the score of the statistics summed in segment order, with the number of
  // reference streams.
  Score corpus_score(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& references) const {
    if (hypotheses.empty()) throw MetricError("no hypotheses to score");
    Stats sum{};
    for (const Stats& stats : corpus_stats(hypotheses, references)) add_stats(sum, stats);
    Score score = derived().score_from_stats(sum);
    score.num_refs = static_cast<int>(references.size());
    return score;
  }

  // Metric.sentence_score: one segment against its references, as a corpus of one segment.
  Score sentence_score(const std::string& hypothesis,
                       const std::vector<std::string>& references) const {
    return corpus_score({hypothesis}, single_segment_streams(references));
  }

 private:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

}  // namespace nmtzoo
