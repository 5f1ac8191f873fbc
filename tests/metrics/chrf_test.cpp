// SPDX-License-Identifier: MIT
// chrF and chrF++ as sacreBLEU 2.6.0 (unchanged since 2.3.1 but for empty references).
//
// Expected values are derived by hand in the comments from sacrebleu/metrics/chrf.py
// (_compute_f_score, _get_match_statistics, _remove_punctuation) and helpers.py, and were
// confirmed with a throwaway Python re-implementation of sacreBLEU 2.3.1 written from its source
// and kept outside the repository ("Python" below). With beta = 2 the F-score of precision P and
// recall R is 5PR / (4P + R), and chrF = 100 * F of the precisions and recalls averaged over the
// orders where both the hypothesis and the reference have n-grams.
#include "torch_free/metrics/chrf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/metrics/sacrebleu_goldens.h"
#include "tests/support/test_support.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

using Streams = std::vector<std::vector<std::string>>;

double chrf(const std::vector<std::string>& hypotheses, const Streams& references,
            ChrfOptions options = {}) {
  return Chrf(options).corpus_score(hypotheses, references).score;
}

ChrfOptions chrf_plus_plus() {
  ChrfOptions options;
  options.word_order = 2;
  return options;
}

TEST(Chrf, WordsSplitOffOnePunctuationCharacterAtAnEdge) {
  // A word longer than one character loses a final string.punctuation character, or else an
  // initial one; only one, so "(hi)" gives "(hi" and ")" and "..." gives ".." and ".".
  EXPECT_EQ(chrf_words("(hi) there, you! ok. ... 'quoted' Fußball. €5 a"),
            (std::vector<std::string>{"(hi", ")", "there", ",", "you", "!", "ok", ".", "..", ".",
                                      "'quoted", "'", "Fußball", ".", "€5", "a"}));
  EXPECT_TRUE(chrf_words(" \t").empty());
}

TEST(Chrf, HandComputedCharacterScore) {
  // "ab" against "abc". Orders 1 and 2 exist on both sides: P = (2/2 + 1/1) / 2 = 1,
  // R = (2/3 + 1/2) / 2 = 7/12. Order 3 exists only in the reference and is left out; 4-6 exist
  // nowhere. F = 5 * 7/12 / (4 + 7/12) = 35/55 = 7/11 -> 63.6363...
  EXPECT_NEAR(chrf({"ab"}, {{"abc"}}), 700.0 / 11, 1e-9);
  // Statistics per order (hyp, ref, match): the trigram's hypothesis count is 0 (none exists).
  EXPECT_EQ(Chrf().segment_stats("ab", {"abc"}),
            (ChrfStats{2, 3, 2, 1, 2, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(Chrf, EpsSmoothingAveragesPerOrderFScoresOverAllOrders) {
  // chrF++.py smoothing: F per order, eps = 1e-16 where a count is 0, divided by all 6 orders.
  // Order 1: P 1, R 2/3 -> 5 * 2/3 / (4 + 2/3) = 5/7. Order 2: P 1, R 1/2 -> 2.5 / 4.5 = 5/9.
  // Order 3: P eps, R 0 -> 0. Orders 4-6: P = R = eps -> eps each.
  // chrF = 100 * (5/7 + 5/9 + 3 eps) / 6 = 100 * 80/63 / 6 = 21.164021164...
  ChrfOptions options;
  options.eps_smoothing = true;
  EXPECT_NEAR(chrf({"ab"}, {{"abc"}}, options), 8000.0 / 378, 1e-9);
}

TEST(Chrf, ChrfPlusPlusAddsWordUnigramsAndBigrams) {
  // "a cat." against "a cat!". Characters without spaces: "acat." and "acat!".
  //   n=1: 5 each, 4 match (a a c t); n=2: 4 each, 3 match (ac ca at); n=3: 3 each, 2 match;
  //   n=4: 2 each, 1 match; n=5: 1 each, 0 match; n=6: none.
  // Words: [a, cat, .] and [a, cat, !]: unigrams 3 each, 2 match; bigrams 2 each, 1 match.
  // Hypothesis and reference have equal counts, so P = R and F = P.
  //   chrF2   = 100 * (4/5 + 3/4 + 2/3 + 1/2 + 0) / 5 = 100 * 163/300 = 54.333...
  //   chrF2++ = 100 * (163/60 + 2/3 + 1/2) / 7 = 100 * 233/420 = 55.476190...
  EXPECT_NEAR(chrf({"a cat."}, {{"a cat!"}}), 100.0 * 163 / 300, 1e-9);
  EXPECT_NEAR(chrf({"a cat."}, {{"a cat!"}}, chrf_plus_plus()), 100.0 * 233 / 420, 1e-9);
  ChrfStats stats = Chrf(chrf_plus_plus()).segment_stats("a cat.", {"a cat!"});
  ASSERT_EQ(stats.size(), 24u);
  EXPECT_EQ(std::vector<int64_t>(stats.begin() + 18, stats.end()),
            (std::vector<int64_t>{3, 3, 2, 2, 2, 1}));
}

TEST(Chrf, ChrfPlusPlusWithEpsSmoothing) {
  // Per-order F with P = R is P: (4/5 + 3/4 + 2/3 + 1/2 + 0 + eps + 2/3 + 1/2) / 8 orders
  // = (233/60) / 8 -> 48.541666... (Python: 48.541666666666664).
  ChrfOptions options = chrf_plus_plus();
  options.eps_smoothing = true;
  EXPECT_NEAR(chrf({"a cat."}, {{"a cat!"}}, options), 100.0 * 233 / 480, 1e-9);
}

TEST(Chrf, BestReferenceIsChosenPerSegmentAndStatisticsAreSummed) {
  // Segment 1's best reference is "a cat!" (the first stream), segment 2's is "the dog" (the
  // second). Their statistics are summed, then scored: per order P = R =
  // 10/11, 8/9, 6/7, 4/5, 2/3, 1/1 -> chrF = 100 * mean = 85.36315536315536 (Python).
  Chrf metric;
  ChrfScore score =
      metric.corpus_score({"a cat.", "the dog"}, {{"a cat!", "the dogs"}, {"xyz", "the dog"}});
  double mean = (10.0 / 11 + 8.0 / 9 + 6.0 / 7 + 4.0 / 5 + 2.0 / 3 + 1.0) / 6;
  EXPECT_NEAR(score.score, 100 * mean, 1e-9);
  EXPECT_EQ(score.num_refs, 2);
  // One segment: the unrelated first reference does not lower the score.
  EXPECT_NEAR(metric.sentence_score("a cat.", {"xyz", "a cat!"}).score, 100.0 * 163 / 300, 1e-9);
}

TEST(Chrf, WhitespaceIsIgnoredUnlessAsked) {
  // "a b c" becomes "abc": a perfect match. With --chrf-whitespace: hyp "a b c" has 5/4/3/2/1
  // n-grams, ref "abc" 3/2/1; matches 3 (a b c), 0, 0. Orders 1-3: P = 3/5, 0, 0 and
  // R = 1, 0, 0 -> P 1/5, R 1/3: F = 5 * 1/15 / (4/5 + 1/3) = (1/3) / (17/15) = 5/17 = 29.41...
  EXPECT_NEAR(chrf({"a b c"}, {{"abc"}}), 100.0, 1e-9);
  ChrfOptions options;
  options.whitespace = true;
  EXPECT_NEAR(chrf({"a b c"}, {{"abc"}}, options), 500.0 / 17, 1e-9);
}

TEST(Chrf, LowercaseMakesCaseIrrelevant) {
  // "ÄPFEL" and "äpfel" share no character; lowercased they are equal.
  EXPECT_EQ(chrf({"ÄPFEL"}, {{"äpfel"}}), 0.0);
  ChrfOptions options;
  options.lowercase = true;
  EXPECT_NEAR(chrf({"ÄPFEL"}, {{"äpfel"}}, options), 100.0, 1e-9);
}

TEST(Chrf, CjkCharactersAreCodePoints) {
  // "日本語です" against "日本語だ", per order (hyp, ref, match): 1: 5, 4, 3; 2: 4, 3, 2;
  // 3: 3, 2, 1; 4: 2, 1, 0; 5: the reference has none. P = (3/5 + 2/4 + 1/3 + 0) / 4 = 43/120,
  // R = (3/4 + 2/3 + 1/2 + 0) / 4 = 23/48: F = 5PR / (4P + R) = 44.88925199709513 (Python).
  EXPECT_EQ(Chrf().segment_stats("日本語です", {"日本語だ"}),
            (ChrfStats{5, 4, 3, 4, 3, 2, 3, 2, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0}));
  double p = 43.0 / 120, r = 23.0 / 48;
  EXPECT_NEAR(chrf({"日本語です"}, {{"日本語だ"}}), 100 * 5 * p * r / (4 * p + r), 1e-9);
}

TEST(Chrf, EmptyHypothesesScoreZeroButCountReferenceNgrams) {
  EXPECT_EQ(chrf({""}, {{"abc"}}), 0.0);
  EXPECT_EQ(chrf({"", ""}, {{"abc", "de"}}), 0.0);
  EXPECT_EQ(chrf({"x"}, {{"abc"}}), 0.0);  // no match at all
  // An empty line beside a perfect one: orders 1-3 have hyp 3, ref 6, match 3: P 1, R 1/2:
  // F = 5 * 1/2 / (4 + 1/2) = 5/9.
  EXPECT_NEAR(chrf({"", "abc"}, {{"abc", "abc"}}), 500.0 / 9, 1e-9);
}

TEST(Chrf, FormatsNameAndSignature) {
  const std::string version = kSignatureVersion;
  Chrf chrf2;
  ChrfScore score = chrf2.corpus_score({"a cat."}, {{"a cat!"}});
  EXPECT_EQ(score.format(2), "chrF2 = 54.33");
  EXPECT_EQ(score.format(1, chrf2.signature(1)),
            "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + version + " = 54.3");
  ChrfOptions options = chrf_plus_plus();
  options.lowercase = true;
  options.eps_smoothing = true;
  options.whitespace = true;
  Chrf plus(options);
  EXPECT_EQ(plus.corpus_score({"a"}, {{"a"}}).name(), "chrF2++");
  EXPECT_EQ(plus.signature(-1), "nrefs:var|case:lc|eff:no|nc:6|nw:2|space:yes|version:" + version);
  EXPECT_EQ(plus.signature(2, true), "#:2|c:lc|e:no|nc:6|nw:2|s:yes|v:" + version);
}

TEST(Chrf, EmptyReferenceScoresZeroAndStreamsOfAnotherLengthAreAnError) {
  EXPECT_EQ(chrf({"a"}, {{""}}), 0.0);  // sacreBLEU 2.6.0: chrF2 = 0.00
  EXPECT_THROW(chrf({"a", "b"}, {{"a"}}), MetricError);
}

// Multi30k 2016 test set against itself with every fifth word dropped (Python values).
TEST(Chrf, Multi30kTestSetMatchesSacrebleu) {
  for (const auto& [lang, expected, expected_plus] :
       std::vector<std::tuple<std::string, double, double>>{
           {"en", 75.29665543747168, 75.90307461775996},
           {"de", 77.96067005820278, 78.02575836065554}}) {
    std::vector<std::string> refs =
        read_lines(testing::multi30k("test_2016_flickr." + lang + ".gz"));
    ASSERT_EQ(refs.size(), 1000u);
    std::vector<std::string> hyps = testing::drop_every_fifth_word(refs);
    EXPECT_NEAR(chrf(hyps, {refs}), expected, 1e-9) << lang;
    EXPECT_NEAR(chrf(hyps, {refs}, chrf_plus_plus()), expected_plus, 1e-9) << lang;
  }
}

}  // namespace
}  // namespace nmtzoo
