// SPDX-License-Identifier: MIT
// sacreBLEU 2.6.0's own test suite (github.com/mjpost/sacrebleu, test/), ported case for case with
// its expected values and tolerances, and goldens computed by sacreBLEU 2.6.0 itself
// (scripts/make_sacrebleu_goldens.py). Nobody here chose these numbers.
//
// Ported: test_bleu.py (every table except test_bleu_max_order), test_sentence_bleu.py,
// test_chrf.py. Left out: test_bleu.py's test_bleu_max_order (BLEU's max_ngram_order is a Python
// constructor argument without a command-line flag; nmtzoo fixes order 4 as the command line
// does), test_api.py and test_dataset.py (test-set downloads: network, and nmtzoo-evaluate has no
// -t). TER's (test_ter.py, test_tokenizer_ter.py) are in ter_test.cpp, test_significance.py's in
// significance_test.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "tests/metrics/sacrebleu_goldens.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/bleu.h"
#include "torch_free/metrics/chrf.h"
#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

using Streams = std::vector<std::vector<std::string>>;

// test_bleu.py ------------------------------------------------------------------------------------

constexpr double kBleuEpsilon = 1e-8;  // test_bleu.py's EPSILON

// sacrebleu.raw_corpus_bleu: floor smoothing, force, tokenize='none', effective order.
BleuScore raw_corpus_bleu(const std::vector<std::string>& hypotheses, const Streams& references,
                          std::optional<double> smooth_value = 0.1) {
  BleuOptions options{BleuTokenizer::kNone, BleuSmooth::kFloor, smooth_value, false, true};
  return Bleu(options).corpus_score(hypotheses, references);
}

const std::vector<std::string> kReadmeHyps = {"The dog bit the man.", "It wasn't surprising.",
                                              "The man had just bitten him."};
const Streams kReadmeRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};

TEST(SacrebleuSuiteBleu, RawBleu) {  // test_raw_bleu
  const std::vector<std::tuple<std::vector<std::string>, Streams, double>> cases = {
      {{"this is a test", "another test"}, {{"ref1", "ref2"}}, 0.0},
      {{"this is a test"}, {{"this is a test"}}, 1.0},
      {{"this is a fest"}, {{"this is a test"}}, 0.223606797749979},
  };
  for (const auto& [hyps, refs, expected] : cases) {
    EXPECT_NEAR(raw_corpus_bleu(hyps, refs, 0.01).score / 100, expected, kBleuEpsilon) << hyps[0];
  }
}

BleuOptions tokenized(BleuTokenizer tokenizer) {
  BleuOptions options;
  options.tokenizer = tokenizer;
  return options;
}

TEST(SacrebleuSuiteBleu, CorpusBleu) {  // test_corpus_bleu
  const std::vector<std::tuple<std::vector<std::string>, BleuOptions, double>> cases = {
      {kReadmeHyps, {}, 48.530827},
      {{"", "", ""}, {}, 0.0},  // empty hypotheses are not removed
      {kReadmeHyps, tokenized(BleuTokenizer::kNone), 49.1919566},
      {kReadmeHyps, tokenized(BleuTokenizer::k13a), 48.530827},
      {kReadmeHyps, tokenized(BleuTokenizer::kIntl), 43.91623493},
      {kReadmeHyps,
       {BleuTokenizer::k13a, BleuSmooth::kNone, std::nullopt, false, false},
       48.530827},
  };
  for (const auto& [hyps, options, expected] : cases) {
    EXPECT_NEAR(Bleu(options).corpus_score(hyps, kReadmeRefs).score, expected, kBleuEpsilon)
        << to_string(options.tokenizer) << " " << to_string(options.smooth);
  }
}

TEST(SacrebleuSuiteBleu, EffectiveOrder) {  // test_effective_order
  const std::vector<std::tuple<std::string, std::string, double>> cases = {
      {"test", "a test", 0.3678794411714425},
      {"a test", "a test", 1.0},
      {"a little test", "a test", 0.03218297948685433},
  };
  for (const auto& [hyp, ref, expected] : cases) {
    EXPECT_NEAR(raw_corpus_bleu({hyp}, {{ref}}, 0.01).score / 100, expected, kBleuEpsilon) << hyp;
  }
}

TEST(SacrebleuSuiteBleu, Statistics) {  // test_statistics
  BleuScore score = raw_corpus_bleu({"am I am a character sequence"},
                                    {{"I am a symbol string sequence a a"}}, 0.01);
  EXPECT_EQ(score.counts, (std::array<int64_t, 4>{4, 2, 1, 0}));
  EXPECT_EQ(score.totals, (std::array<int64_t, 4>{6, 5, 4, 3}));
}

BleuStats stats_of(std::array<int64_t, 4> correct, std::array<int64_t, 4> total, int64_t sys_len,
                   int64_t ref_len) {
  BleuStats stats;
  stats.correct = correct;
  stats.total = total;
  stats.sys_len = sys_len;
  stats.ref_len = ref_len;
  return stats;
}

TEST(SacrebleuSuiteBleu, Scoring) {  // test_scoring: BLEU.compute_bleu's defaults (no smoothing)
  EXPECT_NEAR(compute_bleu(stats_of({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11)).score / 100, 0.8375922397,
              kBleuEpsilon);
}

TEST(SacrebleuSuiteBleu, Offset) {  // test_offset
  const std::vector<std::string> hyp = {"am I am a character sequence"};
  const Streams ref = {{"I am a symbol string sequence a a"}};
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref, 0.0).score / 100, 0.0, kBleuEpsilon);
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref, std::nullopt).score / 100, 0.1555722182, kBleuEpsilon);
  EXPECT_NEAR(raw_corpus_bleu(hyp, ref).score / 100, 0.1555722182, kBleuEpsilon);
}

TEST(SacrebleuSuiteBleu, DegenerateStatistics) {  // test_degenerate_statistics: exact equality
  const std::vector<std::tuple<BleuStats, double, double>> cases = {
      {stats_of({0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1), 0.0, 0.0},
      {stats_of({0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10), 0.0, 0.0},
      {stats_of({0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0), 0.0, 0.0},
      {stats_of({6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6), 0.0, 0.0},
      {stats_of({0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0), 0.1, 0.0},
      {stats_of({0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5), 0.01, 0.0},
  };
  for (const auto& [stats, offset, expected] : cases) {
    EXPECT_EQ(compute_bleu(stats, BleuSmooth::kFloor, offset).score / 100, expected);
  }
}

// test_sentence_bleu.py ---------------------------------------------------------------------------

constexpr double kSentenceEpsilon = 1e-3;  // test_sentence_bleu.py's EPSILON

struct SentenceCase {
  BleuSmooth smooth;
  std::optional<double> smooth_value;
  bool lowercase;
  BleuTokenizer tokenizer;
  double expected;
};

// test_compat_sentence_bleu and test_api_sentence_bleu run the same table through
// sacrebleu.compat.sentence_bleu and BLEU(effective_order=True).sentence_score; both are
// nmtzoo's sentence_bleu with effective order.
TEST(SacrebleuSuiteSentenceBleu, SmoothingTokenizersAndCase) {
  // Example taken from sacreBLEU's issue #98.
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string sys =
      "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  const std::vector<SentenceCase> cases = {
      {BleuSmooth::kExp, std::nullopt, false, BleuTokenizer::k13a, 8.493},
      {BleuSmooth::kNone, std::nullopt, false, BleuTokenizer::k13a, 0.0},
      {BleuSmooth::kFloor, std::nullopt, false, BleuTokenizer::k13a, 4.51688},
      {BleuSmooth::kFloor, 0.1, false, BleuTokenizer::k13a, 4.51688},
      {BleuSmooth::kFloor, 0.5, false, BleuTokenizer::k13a, 10.10},
      {BleuSmooth::kAddK, std::nullopt, false, BleuTokenizer::k13a, 14.882},
      {BleuSmooth::kAddK, 1, false, BleuTokenizer::k13a, 14.882},
      {BleuSmooth::kAddK, 2, false, BleuTokenizer::k13a, 21.389},
      {BleuSmooth::kExp, std::nullopt, false, BleuTokenizer::kNone, 7.347},
      {BleuSmooth::kExp, std::nullopt, false, BleuTokenizer::kIntl, 8.493},
      {BleuSmooth::kExp, std::nullopt, false, BleuTokenizer::kChar, 40.8759},
      {BleuSmooth::kExp, std::nullopt, true, BleuTokenizer::kChar, 42.0267},
  };
  for (const auto& c : cases) {
    BleuOptions options{c.tokenizer, c.smooth, c.smooth_value, c.lowercase, true};
    EXPECT_NEAR(sentence_bleu(sys, {ref}, options).score, c.expected, kSentenceEpsilon)
        << to_string(c.smooth) << " " << to_string(c.tokenizer);
  }
}

TEST(SacrebleuSuiteSentenceBleu,
     NoMatchIsZeroWhateverTheSmoothing) {  // test_api_sentence_bleu_zero
  // Example taken from sacreBLEU's issue #141.
  const std::vector<std::pair<BleuSmooth, std::optional<double>>> cases = {
      {BleuSmooth::kExp, std::nullopt},   {BleuSmooth::kNone, std::nullopt},
      {BleuSmooth::kFloor, std::nullopt}, {BleuSmooth::kFloor, 0.1},
      {BleuSmooth::kAddK, std::nullopt},  {BleuSmooth::kAddK, 1},
  };
  for (const auto& [smooth, value] : cases) {
    BleuOptions options{BleuTokenizer::k13a, smooth, value, false, true};
    EXPECT_NEAR(sentence_bleu("this is a cat", {"okay thanks"}, options).score, 0.0,
                kSentenceEpsilon);
  }
}

// test_chrf.py ------------------------------------------------------------------------------------

constexpr double kChrfEpsilon = 1e-4;  // test_chrf.py's EPSILON

using ChrfCases =
    std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, double>>;

// sacrebleu.corpus_chrf(hypotheses, [references], char_order=6, word_order=0, beta=3, ...).
void expect_corpus_chrf(const ChrfCases& cases, bool eps_smoothing, bool whitespace) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  options.whitespace = whitespace;
  for (const auto& [hyps, refs, expected] : cases) {
    EXPECT_NEAR(Chrf(options).corpus_score(hyps, {refs}).score, expected, kChrfEpsilon) << hyps[0];
  }
}

TEST(SacrebleuSuiteChrf, EpsSmoothing) {  // test_chrf
  expect_corpus_chrf(
      {
          {{"abcdefg"}, {"hijklmnop"}, 0.0},
          {{"a"}, {"b"}, 0.0},
          {{""}, {"b"}, 0.0},
          {{""}, {"ref"}, 0.0},
          {{""}, {"reference"}, 0.0},
          {{"aa"}, {"ab"}, 8.3333},
          {{"a", "b"}, {"a", "c"}, 8.3333},
          {{"a"}, {"a"}, 16.6667},
          {{"a b c"}, {"a b c"}, 50.0},
          {{"a b c"}, {"abc"}, 50.0},
          {{" risk assessment must be made of those who are qualified and expertise in the sector "
            "- these are the scientists ."},
           {"risk assessment has to be undertaken by those who are qualified and expert in that "
            "area - that is the scientists ."},
           63.361730},
          {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
           {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
           64.1302698},
          {{"Niemand hat die Absicht, eine Mauer zu errichten"},
           {"Niemand hat die Absicht, eine Mauer zu errichten"},
           100.0},
      },
      true, false);
}

TEST(SacrebleuSuiteChrf, EffectiveOrder) {  // test_chrf_eff_order
  expect_corpus_chrf(
      {
          {{"a"}, {"a"}, 100.0},
          {{""}, {"reference"}, 0.0},
          {{"a b c"}, {"a b c"}, 100.0},
          {{"a b c"}, {"abc"}, 100.0},
          {{""}, {"c"}, 0.0},
          {{"a", "b"}, {"a", "c"}, 50.0},
          {{"aa"}, {"ab"}, 25.0},
      },
      false, false);
}

TEST(SacrebleuSuiteChrf, KeepWhitespace) {  // test_chrf_keep_whitespace
  expect_corpus_chrf(
      {
          {{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
           {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
           67.3481606},
          {{"risk assessment must be made of those who are qualified and expertise in the sector - "
            "these are the scientists ."},
           {"risk assessment has to be undertaken by those who are qualified and expert in that "
            "area - that is the scientists ."},
           65.2414427},
      },
      false, true);
}

TEST(SacrebleuSuiteChrf, SentenceLevel) {  // test_chrf_sentence_level: sentence_chrf, eps smoothing
  const std::vector<std::tuple<std::string, std::string, double>> cases = {
      {"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
       "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.",
       39.14078509},
      {"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
       "A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.", 31.22557079},
      {"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
       "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.",
       57.15704367},
  };
  ChrfOptions options;
  options.eps_smoothing = true;
  for (const auto& [hyp, ref, expected] : cases) {
    EXPECT_NEAR(Chrf(options).sentence_score(hyp, {ref}).score, expected, kChrfEpsilon) << hyp;
  }
}

// Goldens from sacreBLEU 2.6.0 ------------------------------------------------------------------

using testing::golden_path;
using testing::read_stream;

// sacreBLEU's signature says version:2.6.0 where nmtzoo's says version:2.6.0+nmtzoo.
std::string as_nmtzoo_line(std::string line) {
  const std::string from = std::string("version:") + kSacrebleuVersion;
  size_t at = line.find(from);
  if (at != std::string::npos)
    line.replace(at, from.size(), std::string("version:") + kSignatureVersion);
  return line;
}

BleuOptions bleu_options(const nlohmann::json& json) {
  BleuOptions options;
  options.tokenizer = parse_bleu_tokenizer(json.value("tokenize", "13a"));
  options.lowercase = json.value("lowercase", false);
  options.smooth = parse_bleu_smooth(json.value("smooth_method", "exp"));
  if (json.contains("smooth_value") && !json["smooth_value"].is_null()) {
    options.smooth_value = json["smooth_value"].get<double>();
  }
  return options;
}

ChrfOptions chrf_options(const nlohmann::json& json) {
  ChrfOptions options;
  options.char_order = json.value("char_order", 6);
  options.word_order = json.value("word_order", 0);
  options.beta = json.value("beta", 2);
  options.lowercase = json.value("lowercase", false);
  options.whitespace = json.value("whitespace", false);
  options.eps_smoothing = json.value("eps_smoothing", false);
  return options;
}

// Every tokenizer, case, smoothing and chrF variant over 170 segments (Multi30k English and
// Chinese, empty hypotheses and empty references in both streams), corpus and sentence level.
TEST(SacrebleuGoldens, BleuAndChrfMatchSacrebleu260) {
  const std::vector<std::string> hyps = read_stream("hyp.txt");
  const Streams one = {read_stream("ref1.txt")};
  const Streams two = {read_stream("ref1.txt"), read_stream("ref2.txt")};
  std::ifstream in(golden_path("bleu_chrf_goldens.jsonl"));
  ASSERT_TRUE(in) << golden_path("bleu_chrf_goldens.jsonl");
  int cases = 0;
  for (std::string text; std::getline(in, text);) {
    const nlohmann::json golden = nlohmann::json::parse(text);
    const Streams& refs = golden["refs"] == "ref1" ? one : two;
    const std::string label = golden["metric"].get<std::string>() + " " + golden["options"].dump() +
                              " " + golden["refs"].get<std::string>();
    const auto sentence_scores = golden["sentence_scores"].get<std::vector<double>>();
    ASSERT_EQ(sentence_scores.size(), hyps.size());
    auto expect_golden = [&](const auto& metric) {
      auto score = metric.corpus_score(hyps, refs);
      EXPECT_NEAR(score.score, golden["score"].get<double>(), 1e-9) << label;
      EXPECT_EQ(score.format(2, metric.signature(score.num_refs)),
                as_nmtzoo_line(golden["line"].get<std::string>()))
          << label;
      for (size_t i = 0; i < hyps.size(); ++i) {
        std::vector<std::string> segment_refs;
        for (const auto& stream : refs) segment_refs.push_back(stream[i]);
        EXPECT_NEAR(metric.sentence_score(hyps[i], segment_refs).score, sentence_scores[i], 1e-9)
            << label << " line " << i + 1;
      }
    };
    if (golden["metric"] == "bleu") {
      expect_golden(Bleu(bleu_options(golden["options"])));
    } else {
      expect_golden(Chrf(chrf_options(golden["options"])));
    }
    ++cases;
  }
  EXPECT_EQ(cases, 46);
}

}  // namespace
}  // namespace nmtzoo
