// SPDX-License-Identifier: MIT
// BLEU (Papineni et al. 2002) exactly as sacreBLEU 2.x computes it (sacrebleu/metrics/bleu.py),
// on detokenised text: the same tokenizers, n-gram clipping, closest reference length, smoothing
// methods, effective order, number formats and reproducibility signature.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torch_free/metrics/bleu_tokenizers.h"
#include "torch_free/metrics/corpus_metric.h"

namespace nmtzoo {

enum class BleuSmooth {
  kNone,   // "none"
  kFloor,  // "floor": zero matches count as `smooth_value` (default 0.1)
  kAddK,   // "add-k": add `smooth_value` (default 1) to matches and totals of orders 2..4
  kExp,    // "exp": NIST geometric sequence 1/2, 1/4, ... for zero matches; sacreBLEU's default
};

BleuSmooth parse_bleu_smooth(const std::string& name);  // throws MetricError
std::string to_string(BleuSmooth smooth);               // the sacreBLEU name

struct BleuOptions {
  BleuTokenizer tokenizer = BleuTokenizer::k13a;
  BleuSmooth smooth = BleuSmooth::kExp;
  std::optional<double> smooth_value;  // floor and add-k only; unset = 0.1 and 1
  bool lowercase = false;              // case-insensitive BLEU (Python's str.lower())
  bool effective_order = false;        // ignore orders no hypothesis n-gram reaches; sentence BLEU
};

constexpr int kBleuMaxOrder = 4;

// Sufficient statistics of one segment or, summed, of a corpus.
struct BleuStats {
  int64_t sys_len = 0;                           // hypothesis tokens
  int64_t ref_len = 0;                           // closest reference length
  std::array<int64_t, kBleuMaxOrder> correct{};  // clipped n-gram matches per order
  std::array<int64_t, kBleuMaxOrder> total{};    // hypothesis n-grams per order
  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0.0;                              // 0..100
  std::array<double, kBleuMaxOrder> precisions{};  // percent, after smoothing
  double bp = 0.0;                                 // brevity penalty
  double ratio = 0.0;                              // sys_len / ref_len (0 when ref_len is 0)
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::array<int64_t, kBleuMaxOrder> counts{};  // matches before add-k smoothing
  std::array<int64_t, kBleuMaxOrder> totals{};  // hypothesis n-grams before add-k smoothing
  int num_refs = 1;                             // references per segment; -1 = it varies

  // "67.2/43.1/29.8/21.0 (BP = 0.981 ratio = 0.981 hyp_len = 14000 ref_len = 14270)"
  std::string verbose() const;
  // sacreBLEU's line: "BLEU = 35.21 67.2/..." with the score to `width` decimals; with a signature
  // "BLEU|nrefs:1|...|version:2.6.0+nmtzoo = 35.21 67.2/...".
  std::string format(int width = 2, const std::string& signature = "") const;
};

// The reference length compared with a hypothesis of `hyp_len` tokens: the closest one, and the
// shorter one on a tie (sacreBLEU's _get_closest_ref_len). `ref_lens` must not be empty.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens);

// sacreBLEU's BLEU.compute_bleu: brevity penalty, smoothed precisions and their geometric mean.
BleuScore compute_bleu(const BleuStats& stats, BleuSmooth smooth = BleuSmooth::kNone,
                       std::optional<double> smooth_value = std::nullopt,
                       bool effective_order = false);

// corpus_score, sentence_score and corpus_stats come from CorpusMetric. sentence_score keeps the
// options as given: set effective_order for sentence BLEU, or use sentence_bleu below.
class Bleu : public CorpusMetric<Bleu, BleuStats, BleuScore> {
 public:
  explicit Bleu(BleuOptions options = {});

  // Lowercasing (if asked) and tokenization of one segment.
  std::string preprocess(std::string_view segment) const;
  BleuStats segment_stats(const std::string& hypothesis,
                          const std::vector<std::string>& references) const;
  BleuScore score_from_stats(const BleuStats& stats) const;

  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo"; num_refs -1 = "var";
  // `short_form` uses sacreBLEU's abbreviations ("#:1|c:mixed|e:no|tok:13a|s:exp|v:...").
  std::string signature(int num_refs = 1, bool short_form = false) const;
  const BleuOptions& options() const { return options_; }

 private:
  BleuOptions options_;
};

// sacrebleu.sentence_bleu: one segment, exp smoothing and effective order by default.
BleuScore sentence_bleu(const std::string& hypothesis, const std::vector<std::string>& references,
                        BleuOptions options = BleuOptions{BleuTokenizer::k13a, BleuSmooth::kExp,
                                                          std::nullopt, false, true});

}  // namespace nmtzoo
