// SPDX-License-Identifier: MIT
// BLEU as sacreBLEU 2.6.0 (as 2.3.1 but for empty references), and the Unicode helpers under it.
//
// Where the expected values come from:
// - "by hand": derived in the comment from the definitions in sacrebleu/metrics/bleu.py
//   (compute_bleu, _get_closest_ref_len) and the tokenizer regexes in sacrebleu/tokenizers/;
// - "Python": printed by a throwaway Python 3.11 re-implementation of sacreBLEU 2.3.1 written from
//   its source (the regexes run through Python's re; the `regex` module's \p{..} classes built
//   from unicodedata), kept outside the repository. Where both exist they agree; the hand-derived
//   values are compared at 1e-9, the Python ones at the last printed digit.
#include "torch_free/metrics/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/metrics/sacrebleu_goldens.h"
#include "tests/support/test_support.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/text_normalize.h"

namespace nmtzoo {
namespace {

using Streams = std::vector<std::vector<std::string>>;

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses, const Streams& references,
                      BleuOptions options = {}) {
  return Bleu(options).corpus_score(hypotheses, references);
}

BleuOptions with_smooth(BleuSmooth smooth, std::optional<double> value = std::nullopt) {
  BleuOptions options;
  options.smooth = smooth;
  options.smooth_value = value;
  return options;
}

// ---------------------------------------------------------------------------------------------
// 13a tokenizer. Expected outputs by hand from tokenizer_13a.py + tokenizer_re.py, confirmed with
// Python's re. The line is padded with one space on each side; then (1) each of
// { | } ~ [ \ ] ^ _ ` ! " # $ % & ( ) * + : ; < = > ? @ / gets spaces around it; (2) [.,] after a
// non-digit gets a space on both sides; (3) [.,] before a non-digit likewise; (4) '-' after a
// digit likewise; whitespace then collapses.

TEST(Tokenizer13a, SplitsPunctuationButKeepsNumberSeparators) {
  // "$" and "%" by rule 1. In "1,000.50," the ',' and '.' sit between digits: rules 2 and 3 do
  // not apply; the last ',' follows a digit (rule 2 no) but precedes a space (rule 3 yes). "i.e."
  // splits by rule 2 (letter before the dot).
  EXPECT_EQ(tokenize_13a("It costs $1,000.50, i.e. 5% more."),
            "It costs $ 1,000.50 , i . e . 5 % more .");
  // Commas between digits stay, others split.
  EXPECT_EQ(tokenize_13a("1,2,3 a,b .,."), "1,2,3 a , b . , .");
}

TEST(Tokenizer13a, SplitsDashOnlyAfterADigitAndFinalPeriodAfterANumber) {
  // "2020-01-01": rule 4 splits the dashes after "0" and "1"; "well-known" keeps its dash; the
  // final "2019." splits because of the padding space (rule 3: '.' before ' ').
  EXPECT_EQ(tokenize_13a("On 2020-01-01 a well-known 5-year plan (ca. 3.5%) ended in 2019."),
            "On 2020 - 01 - 01 a well-known 5 - year plan ( ca . 3.5 % ) ended in 2019 .");
}

TEST(Tokenizer13a, SplitsAbbreviationsAndLeadingDecimalPoints) {
  // ".5": the '.' follows a space (rule 2 splits it) but precedes a digit (rule 3 does not);
  // "5." splits through rule 3 ('.' before ' '); "3.14," keeps its decimal point.
  EXPECT_EQ(tokenize_13a("U.S.A. and e.g. 3.14, .5 and 5. end"),
            "U . S . A . and e . g . 3.14 , . 5 and 5 . end");
}

TEST(Tokenizer13a, KeepsApostrophesAndHyphensButSplitsAsciiSymbols) {
  // The apostrophe (0x27), hyphen, comma and period are outside rule 1's class; ':' '[' ']' '{'
  // '}' '/' '~' '_' '|' are inside it.
  EXPECT_EQ(tokenize_13a("Don't stop: it's 12:30 [OK] {x} a/b ~y_z|w"),
            "Don't stop : it's 12 : 30 [ OK ] { x } a / b ~ y _ z | w");
}

TEST(Tokenizer13a, UnescapesEntitiesOnceInSacrebleusOrder) {
  // &quot; &amp; &lt; &gt; are replaced in that order, each once over the whole line: "&amp;lt;"
  // becomes "&lt;" then "<", but "&amp;quot;" becomes "&quot;" after the &quot; pass, so it stays
  // and rule 1 splits its '&' and ';'.
  EXPECT_EQ(tokenize_13a("&quot;Tom &amp; Jerry&quot; &lt;3 &amp;lt; &amp;quot;"),
            "\" Tom & Jerry \" < 3 < & quot ;");
}

TEST(Tokenizer13a, DropsSkippedMarkersAndJoinsLineEndHyphenation) {
  // "<skipped>" is deleted first, then "-\n" (a hyphenated line break) and "\n" becomes a space.
  EXPECT_EQ(tokenize_13a("a <skipped> b co-\noperate x\ny"), "a b cooperate x y");
  EXPECT_EQ(tokenize_13a("<skipped>"), "");
}

TEST(Tokenizer13a, SplitsOnUnicodeWhitespaceAsPythonDoes) {
  // str.split() treats U+00A0 (no-break space) as whitespace; umlauts and ß are letters.
  EXPECT_EQ(tokenize_13a("Zwei Männer\u00a0spielen Fußball."), "Zwei Männer spielen Fußball .");
  EXPECT_EQ(tokenize_13a(""), "");
  EXPECT_EQ(tokenize_13a("  \t "), "");
}

// ---------------------------------------------------------------------------------------------
// intl tokenizer (tokenizer_intl.py): (\P{N})(\p{P}) -> '\1 \2 ', (\p{P})(\P{N}) -> ' \1 \2',
// (\p{S}) -> ' \1 '. Expected outputs by hand, confirmed with Python.

TEST(TokenizerIntl, SeparatesCjkPunctuation) {
  // 。、「」 are P* (Po, Ps, Pe); the CJK letters are Lo and stay together.
  EXPECT_EQ(tokenize_intl("日本語。テスト、です「引用」"), "日本語 。 テスト 、 です 「 引用 」");
}

TEST(TokenizerIntl, SeparatesSymbolsButKeepsPunctuationBetweenDigits) {
  // € is Sc (a symbol: always split); ',' and '.' between digits match neither punctuation rule.
  EXPECT_EQ(tokenize_intl("Preis: €100, 1,000.50 Euro!"), "Preis : € 100 , 1,000.50 Euro !");
  EXPECT_EQ(tokenize_intl("a—b (ok)"), "a — b ( ok )");
}

TEST(TokenizerIntl, KeepsPunctuationAfterANumberAtTheEnd) {
  // mteval-v14's quirk, kept by sacreBLEU: a '.' or '%' after a digit at the end of the line has
  // a number before it (first rule fails) and nothing after it (second rule fails).
  EXPECT_EQ(tokenize_intl("Im Jahr 2019."), "Im Jahr 2019.");
  EXPECT_EQ(tokenize_intl("5%"), "5%");
}

// zh tokenizer: outputs printed by sacreBLEU 2.6.0's TokenizerZh.
TEST(TokenizerZh, SeparatesChineseCharactersThenAppliesTheRegexps) {
  EXPECT_EQ(tokenize_zh("我们是中国人。"), "我 们 是 中 国 人 。");
  EXPECT_EQ(tokenize_zh("“你好”，他说—— 3.5 元 .5%"), "“ 你 好 ” ， 他 说 — — 3.5 元 . 5 %");
  // No 13a padding: a leading ".5" stays one token where 13a would split it.
  EXPECT_EQ(tokenize_zh("  hello, world.  "), "hello , world .");
  EXPECT_EQ(tokenize_zh(".5 x"), ".5 x");
  EXPECT_EQ(tokenize_13a(".5 x"), ". 5 x");
}

TEST(TokenizerZh, ReproducesTheTwoCharacterRangeBoundsOfTheSource) {
  // u'\u20000' and u'\u2a6d6' are two-character strings in Python: the "range" is U+2001..U+2A6D
  // (U+2001 is whitespace, so it vanishes); Extension B (U+20000) is not in it.
  EXPECT_EQ(tokenize_zh("\u2000x\u2001y\U00020000z"), "x y\U00020000z");
  EXPECT_EQ(tokenize_zh("a\u20acb"), "a \u20ac b");  // the euro sign counts as Chinese
  EXPECT_EQ(tokenize_zh("a\u2a6eb\u2a6dc"), "a\u2a6eb \u2a6d c");
  EXPECT_EQ(tokenize_zh("a\u2f80b\u2f81c\u2fa1d\u2fa2e"), "a \u2f80 b \u2f81 c \u2fa1 d \u2fa2 e");
}

TEST(TokenizerChar, PutsASpaceBetweenAllCodePoints) {
  // " ".join("ab c"): the space is a character too; splitting later drops it.
  EXPECT_EQ(tokenize_char("ab c"), "a b   c");
  EXPECT_EQ(tokenize_char("日本"), "日 本");
}

// ---------------------------------------------------------------------------------------------
// Unicode helpers: expected values are Python's str methods (Python 3.11).

TEST(TextNormalize, LowercaseMatchesPythonStrLower) {
  EXPECT_EQ(lowercase("ÄÖÜ Straße İ ǅ"), "äöü straße i\u0307 ǆ");  // İ has a two-code-point lower
  EXPECT_EQ(lowercase("THE CAT"), "the cat");
}

TEST(TextNormalize, LowercaseUsesFinalSigmaAtWordEnds) {
  // A capital sigma after a cased letter and not before one becomes ς; '.' and "'" are
  // case-ignorable and skipped when looking around.
  EXPECT_EQ(lowercase("ΟΔΟΣ ΣΟΦΟΣ."), "οδος σοφος.");
  EXPECT_EQ(lowercase("Σ"), "σ");
  EXPECT_EQ(lowercase("ΑΣ.Β"), "ασ.β");
  EXPECT_EQ(lowercase("ΑΣ'"), "ας'");
  EXPECT_EQ(lowercase("ΑΣΑ"), "ασα");
}

TEST(TextNormalize, SplitsAndStripsPythonWhitespace) {
  // U+3000 and U+001C are whitespace for Python; U+200B (zero width space, Cf) is not.
  std::vector<std::string_view> words = split_whitespace(
      "a\u00a0b\u3000c\x1c"
      "d\u200be");
  EXPECT_EQ(words, (std::vector<std::string_view>{"a", "b", "c", "d\u200be"}));
  EXPECT_EQ(rstrip_whitespace("ab \u2028\t"), "ab");
  EXPECT_TRUE(split_whitespace(" \t\n").empty());
}

TEST(TextNormalize, SplitsCodePointsAndClassifiesThem) {
  std::vector<std::string_view> pieces = split_code_points("aä日😀");
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[1].size(), 2u);
  EXPECT_EQ(pieces[3].size(), 4u);
  EXPECT_EQ(split_code_points("a\xff").size(), 2u);  // an invalid byte is a piece of its own
  EXPECT_TRUE(is_unicode_punctuation(U'。'));
  EXPECT_TRUE(is_unicode_punctuation(U'-'));
  EXPECT_FALSE(is_unicode_punctuation(U'€'));
  EXPECT_TRUE(is_unicode_symbol(U'€'));
  EXPECT_TRUE(is_unicode_symbol(U'+'));
  EXPECT_TRUE(is_unicode_number(U'٣'));  // Arabic-Indic three, Nd
  EXPECT_TRUE(is_unicode_number(U'½'));  // No
  EXPECT_FALSE(is_unicode_number(U'x'));
  EXPECT_EQ(decode_utf8("aä"), U"aä");
  EXPECT_EQ(encode_utf8(U"日😀"), "日😀");
}

// ---------------------------------------------------------------------------------------------
// Corpus BLEU. Case A, used below: hypothesis "the cat on the mat" (5 tokens), reference
// "the cat sat on the mat" (6 tokens). By hand:
//   1-grams the×2 cat on mat: all in the reference (it has "the" twice)  -> 5/5 = 100
//   2-grams the·cat cat·on on·the the·mat: "cat on" is missing           -> 3/4 = 75
//   3-grams the·cat·on cat·on·the on·the·mat: only "on the mat"          -> 1/3 = 33.33
//   4-grams the·cat·on·the cat·on·the·mat: none                          -> 0/2
//   BP = exp(1 - 6/5) = exp(-0.2) = 0.8187307530779818
const std::vector<std::string> kCaseAHyp = {"the cat on the mat"};
const Streams kCaseARef = {{"the cat sat on the mat"}};

TEST(Bleu, PerfectMatchScores100) {
  BleuScore score = corpus_bleu({"the cat sat on the mat"}, {{"the cat sat on the mat"}});
  EXPECT_NEAR(score.score, 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(score.bp, 1.0);
  for (double p : score.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_EQ(score.counts, (std::array<int64_t, 4>{6, 5, 4, 3}));
  EXPECT_EQ(score.totals, (std::array<int64_t, 4>{6, 5, 4, 3}));
}

TEST(Bleu, ExpSmoothingHalvesTheFirstZeroOrder) {
  // exp: the first order without a match gets 100 / (2 * total) = 100 / 4 = 25. The geometric
  // mean of 100, 75, 100/3, 25 is (6 250 000)^(1/4) = 50, so BLEU = 50 * exp(-0.2) = 40.9365...
  BleuScore score = corpus_bleu(kCaseAHyp, kCaseARef);
  EXPECT_NEAR(score.bp, std::exp(-0.2), 1e-12);
  EXPECT_NEAR(score.precisions[0], 100.0, 1e-12);
  EXPECT_NEAR(score.precisions[1], 75.0, 1e-12);
  EXPECT_NEAR(score.precisions[2], 100.0 / 3, 1e-12);
  EXPECT_NEAR(score.precisions[3], 25.0, 1e-12);
  EXPECT_NEAR(score.score, 50 * std::exp(-0.2), 1e-9);
  EXPECT_EQ(score.sys_len, 5);
  EXPECT_EQ(score.ref_len, 6);
  EXPECT_EQ(score.counts, (std::array<int64_t, 4>{5, 3, 1, 0}));
  EXPECT_EQ(score.totals, (std::array<int64_t, 4>{5, 4, 3, 2}));
}

TEST(Bleu, FloorSmoothingGivesZeroOrdersTheSmoothValue) {
  // floor: the 4-gram precision is 100 * 0.1 / 2 = 5; BLEU = exp(-0.2) * (100*75*(100/3)*5)^(1/4)
  // = exp(-0.2) * (1 250 000)^(1/4) = 27.37591267534726 (Python: 27.37591267534726).
  BleuScore score = corpus_bleu(kCaseAHyp, kCaseARef, with_smooth(BleuSmooth::kFloor));
  EXPECT_NEAR(score.precisions[3], 5.0, 1e-12);
  EXPECT_NEAR(score.score, std::exp(-0.2) * std::pow(1250000.0, 0.25), 1e-9);
  // --smooth-value 0.2: 4-gram precision 10, BLEU = exp(-0.2) * (2 500 000)^(1/4) = 32.5556...
  score = corpus_bleu(kCaseAHyp, kCaseARef, with_smooth(BleuSmooth::kFloor, 0.2));
  EXPECT_NEAR(score.score, std::exp(-0.2) * std::pow(2500000.0, 0.25), 1e-9);
}

TEST(Bleu, AddKSmoothingAddsOneToOrdersTwoToFour) {
  // add-k with k = 1 on orders 2..4: (3+1)/(4+1) = 80, (1+1)/(3+1) = 50, (0+1)/(2+1) = 33.3;
  // unigrams stay 100. BLEU = exp(-0.2) * (100*80*50*(100/3))^(1/4) = 49.473859088183865.
  BleuScore score = corpus_bleu(kCaseAHyp, kCaseARef, with_smooth(BleuSmooth::kAddK));
  EXPECT_NEAR(score.precisions[1], 80.0, 1e-12);
  EXPECT_NEAR(score.precisions[2], 50.0, 1e-12);
  EXPECT_NEAR(score.precisions[3], 100.0 / 3, 1e-12);
  EXPECT_NEAR(score.score, std::exp(-0.2) * std::pow(100 * 80 * 50 * (100.0 / 3), 0.25), 1e-9);
  EXPECT_EQ(score.counts, (std::array<int64_t, 4>{5, 3, 1, 0}));  // our counts stay unsmoothed
}

TEST(Bleu, NoSmoothingGivesZeroWhenAnOrderHasNoMatch) {
  // none: log(0) is floored at -9999999999, so exp(mean) underflows to 0.
  BleuScore score = corpus_bleu(kCaseAHyp, kCaseARef, with_smooth(BleuSmooth::kNone));
  EXPECT_EQ(score.score, 0.0);
  EXPECT_EQ(score.precisions[3], 0.0);
  EXPECT_NEAR(score.precisions[1], 75.0, 1e-12);
}

TEST(Bleu, ZeroMatchesGiveZeroWhateverTheSmoothing) {
  // No n-gram of any order matches: compute_bleu returns 0 with all precisions 0 before
  // smoothing (sacreBLEU issue #141); the brevity penalty is still computed (1: equal lengths).
  for (auto smooth : {BleuSmooth::kExp, BleuSmooth::kFloor, BleuSmooth::kAddK, BleuSmooth::kNone}) {
    BleuScore score = corpus_bleu({"x y z w"}, {{"a b c d"}}, with_smooth(smooth));
    EXPECT_EQ(score.score, 0.0) << to_string(smooth);
    EXPECT_EQ(score.precisions, (std::array<double, 4>{0, 0, 0, 0})) << to_string(smooth);
    EXPECT_EQ(score.bp, 1.0);
  }
}

TEST(Bleu, HypothesisLongerThanReferenceHasNoBrevityPenalty) {
  // 7 tokens against 6: BP = 1, ratio 7/6; precisions 6/7, 5/6, 4/5, 3/4, whose product is 3/7:
  // BLEU = 100 * (3/7)^(1/4) = 80.91067115702207.
  BleuScore score = corpus_bleu({"the cat sat on the mat today"}, {{"the cat sat on the mat"}});
  EXPECT_EQ(score.bp, 1.0);
  EXPECT_NEAR(score.ratio, 7.0 / 6, 1e-12);
  EXPECT_NEAR(score.score, 100 * std::pow(3.0 / 7, 0.25), 1e-9);
}

TEST(Bleu, ClosestReferenceLengthPrefersTheShorterOnATie) {
  EXPECT_EQ(closest_ref_len(5, {6, 4}), 4);
  EXPECT_EQ(closest_ref_len(5, {4, 6}), 4);
  EXPECT_EQ(closest_ref_len(5, {7, 3, 6}), 6);
  EXPECT_EQ(closest_ref_len(0, {3, 2}), 2);
  EXPECT_EQ(closest_ref_len(9, {2, 5}), 5);
  // 5 tokens against references of 4 and 6: ref_len 4, so no brevity penalty, and every n-gram
  // is found in the second reference: BLEU 100.
  BleuScore score = corpus_bleu({"a b c d e"}, {{"a b c d"}, {"a b c d e f"}});
  EXPECT_EQ(score.ref_len, 4);
  EXPECT_EQ(score.bp, 1.0);
  EXPECT_NEAR(score.score, 100.0, 1e-9);
  EXPECT_EQ(score.num_refs, 2);
}

TEST(Bleu, ReferencesClipCountsByTheirLargestCount) {
  // "the the the" against "the cat" and "the the dog": "the" may match max(1, 2) = 2 times,
  // "the the" max(0, 1) = 1 time; "the the the" never. ref_len: 3 is closest to 3.
  BleuScore score = corpus_bleu({"the the the"}, {{"the cat"}, {"the the dog"}});
  EXPECT_EQ(score.counts, (std::array<int64_t, 4>{2, 1, 0, 0}));
  EXPECT_EQ(score.totals, (std::array<int64_t, 4>{3, 2, 1, 0}));
  EXPECT_EQ(score.ref_len, 3);
  // exp smoothing gives the trigram 100 / (2 * 1) = 50, the 4-grams have no total: the loop
  // stops and their precision stays 0, so without effective order BLEU is 0.
  EXPECT_NEAR(score.precisions[2], 50.0, 1e-12);
  EXPECT_EQ(score.score, 0.0);
}

TEST(Bleu, EffectiveOrderIgnoresOrdersTheHypothesisCannotReach) {
  // "the cat" against "the cat sat": 2/2 unigrams, 1/1 bigrams, no trigrams at all.
  // With effective order the mean is over 2 orders: BLEU = exp(1 - 3/2) * 100 = 60.6530659712...
  BleuOptions options;
  options.effective_order = true;
  EXPECT_NEAR(corpus_bleu({"the cat"}, {{"the cat sat"}}, options).score, 100 * std::exp(-0.5),
              1e-9);
  EXPECT_EQ(corpus_bleu({"the cat"}, {{"the cat sat"}}).score, 0.0);
}

TEST(Bleu, SentenceBleuUsesExpSmoothingAndEffectiveOrder) {
  // "the cat sat on a mat": 5/6, 3/5, 2/4, 1/3, BP 1: 100 * (1/12)^(1/4) = 53.7284965911771.
  EXPECT_NEAR(sentence_bleu("the cat sat on a mat", {"the cat sat on the mat"}).score,
              100 * std::pow(1.0 / 12, 0.25), 1e-9);
  // "the cat sat in a mat": 4/6, 2/5, 1/4, 0/3 -> exp gives 100/(2*3); BLEU = (66.67 * 40 * 25 *
  // 16.67)^(1/4) = (10^6 * 10/9)^(1/4) = 32.46679154750991 (Python: 32.46679154750991).
  BleuScore score = sentence_bleu("the cat sat in a mat", {"the cat sat on the mat"});
  EXPECT_NEAR(score.precisions[3], 100.0 / 6, 1e-12);
  EXPECT_NEAR(score.score, std::pow(1e6 * 10 / 9, 0.25), 1e-9);
  // Short sentence: effective order 2, as in EffectiveOrderIgnoresOrdersTheHypothesisCannotReach.
  EXPECT_NEAR(sentence_bleu("the cat", {"the cat sat"}).score, 100 * std::exp(-0.5), 1e-9);
}

TEST(Bleu, EmptyHypothesisLineAddsOnlyReferenceLength) {
  // Line 2's hypothesis is empty: it adds 0 to sys_len and 2 ("a dog") to ref_len. Line 1 is a
  // perfect match, so all precisions are 100 and BLEU = 100 * exp(1 - 8/6) = 71.653131057378...
  BleuScore score =
      corpus_bleu({"the cat sat on the mat", ""}, {{"the cat sat on the mat", "a dog"}});
  EXPECT_EQ(score.sys_len, 6);
  EXPECT_EQ(score.ref_len, 8);
  EXPECT_NEAR(score.score, 100 * std::exp(1 - 8.0 / 6), 1e-9);
}

TEST(Bleu, AllEmptyHypothesesScoreZero) {
  // sys_len 0: BP = 0 and no matches; the ratio is 0/8.
  BleuScore score = corpus_bleu({"", ""}, {{"the cat sat on the mat", "a dog"}});
  EXPECT_EQ(score.score, 0.0);
  EXPECT_EQ(score.bp, 0.0);
  EXPECT_EQ(score.format(2),
            "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 8)");
}

TEST(Bleu, TokenizationMakesDetokenizedAndTokenizedTextEqual) {
  // 13a turns both sides into the same tokens, so BLEU is 100 (4 and 7 tokens).
  EXPECT_NEAR(corpus_bleu({"Hello, world!"}, {{"Hello , world !"}}).score, 100.0, 1e-9);
  EXPECT_NEAR(corpus_bleu({"on 2020-01-01."}, {{"on 2020 - 01 - 01 ."}}).score, 100.0, 1e-9);
  // Without tokenization "world!" and "world" differ: 2-word sentences have no 3-grams -> 0.
  BleuOptions none;
  none.tokenizer = BleuTokenizer::kNone;
  BleuScore score = corpus_bleu({"Hello, world!"}, {{"Hello , world !"}}, none);
  EXPECT_EQ(score.sys_len, 2);
  EXPECT_EQ(score.counts[0], 0);
  EXPECT_EQ(score.score, 0.0);
}

TEST(Bleu, LowercaseMakesCaseIrrelevant) {
  BleuOptions lowercase;
  lowercase.lowercase = true;
  EXPECT_EQ(corpus_bleu({"THE CAT SAT ON THE MAT"}, {{"the cat sat on the mat"}}).score, 0.0);
  EXPECT_NEAR(
      corpus_bleu({"THE CAT SAT ON THE MAT"}, {{"the cat sat on the mat"}}, lowercase).score, 100.0,
      1e-9);
  EXPECT_NEAR(
      corpus_bleu({"ZWEI MÄNNER ÜBER DER BRÜCKE"}, {{"zwei männer über der brücke"}}, lowercase)
          .score,
      100.0, 1e-9);
}

TEST(Bleu, IntlTokenizerSplitsCjkPunctuation) {
  // intl: "日本語のテスト 。" (2 tokens) against "日本語のテスト 、 です 。" (4 tokens); 13a keeps
  // each side one token. Sentence BLEU with intl: 2/2 unigrams, 0/1 bigram -> exp 100/2 = 50,
  // effective order 2, BP exp(1 - 4/2): BLEU = exp(-1) * sqrt(100 * 50) = 26.013004751144457.
  BleuOptions intl{BleuTokenizer::kIntl, BleuSmooth::kExp, std::nullopt, false, true};
  BleuScore score = sentence_bleu("日本語のテスト。", {"日本語のテスト、です。"}, intl);
  EXPECT_EQ(score.sys_len, 2);
  EXPECT_EQ(score.ref_len, 4);
  EXPECT_NEAR(score.score, std::exp(-1.0) * std::sqrt(5000.0), 1e-9);
  EXPECT_EQ(corpus_bleu({"日本語のテスト。"}, {{"日本語のテスト、です。"}}).sys_len, 1);
}

TEST(Bleu, EmptyReferencesAreReferencesOfNoTokens) {
  // sacreBLEU >= 2.2.0 keeps '' references (issue #161): nrefs stays 2 and the empty reference
  // of line 2 is one of its references (sacreBLEU 2.6.0: 100.00, hyp_len 8, ref_len 8, nrefs:2).
  Bleu bleu;
  BleuScore score = bleu.corpus_score({"a b c d", "e f g h"}, {{"a b c d", "e f g h"}, {"x", ""}});
  EXPECT_EQ(score.num_refs, 2);
  EXPECT_NEAR(score.score, 100.0, 1e-9);
  EXPECT_EQ(
      bleu.signature(score.num_refs),
      std::string("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:") + kSignatureVersion);
  // A segment whose only reference is empty: ref_len 0 there (sacreBLEU 2.6.0: 0.00, 50.0/0.0/0.0/
  // 0.0, ratio 2.000, hyp_len 2, ref_len 1).
  BleuScore lone = corpus_bleu({"a", "b"}, {{"a", ""}});
  EXPECT_EQ(lone.format(2),
            "BLEU = 0.00 50.0/0.0/0.0/0.0 (BP = 1.000 ratio = 2.000 hyp_len = 2 ref_len = 1)");
}

TEST(Bleu, StreamsOfAnotherLengthAreAnError) {
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}}), MetricError);  // stream shorter than hypotheses
  EXPECT_THROW(corpus_bleu({}, {{}}), MetricError);
}

TEST(Bleu, FormatsSacrebleusLine) {
  // Score to `width` decimals, precisions to 1, BP and ratio to 3 (BLEUScore, Score.format).
  Bleu bleu;
  BleuScore score = bleu.corpus_score(kCaseAHyp, kCaseARef);
  EXPECT_EQ(score.format(2),
            "BLEU = 40.94 100.0/75.0/33.3/25.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 ref_len = 6)");
  EXPECT_EQ(score.format(1, bleu.signature(1)),
            std::string("BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:") +
                kSignatureVersion +
                " = 40.9 100.0/75.0/33.3/25.0 (BP = 0.819 ratio = 0.833 hyp_len = 5 ref_len = 6)");
  EXPECT_EQ(score.format(0).substr(0, 10), "BLEU = 41 ");
}

TEST(Bleu, SignatureNamesEveryOption) {
  BleuOptions options{BleuTokenizer::kIntl, BleuSmooth::kAddK, std::nullopt, true, true};
  const std::string version = kSignatureVersion;
  EXPECT_EQ(Bleu(options).signature(3),
            "nrefs:3|case:lc|eff:yes|tok:intl|smooth:add-k[1.00]|version:" + version);
  EXPECT_EQ(Bleu(with_smooth(BleuSmooth::kFloor)).signature(1, true),
            "#:1|c:mixed|e:no|tok:13a|s:floor[0.10]|v:" + version);
  EXPECT_EQ(Bleu(with_smooth(BleuSmooth::kFloor, 0.25)).signature(1),
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.25]|version:" + version);
  EXPECT_EQ(parse_bleu_tokenizer("intl"), BleuTokenizer::kIntl);
  EXPECT_EQ(parse_bleu_smooth("add-k"), BleuSmooth::kAddK);
  EXPECT_EQ(parse_bleu_tokenizer("zh"), BleuTokenizer::kZh);
  EXPECT_THROW(parse_bleu_tokenizer("ja-mecab"), MetricError);
}

// The Multi30k 2016 test set (English and German) against itself with every fifth word dropped,
// scored by the Python re-implementation of sacreBLEU 2.3.1 (see the top of this file).
TEST(Bleu, Multi30kTestSetMatchesSacrebleu) {
  for (const auto& [lang, expected, expected_lc_intl] :
       std::vector<std::tuple<std::string, double, double>>{
           {"en", 52.2932204792594, 52.71290249314677},
           {"de", 53.344749267760584, 53.67880485938547}}) {
    std::vector<std::string> refs =
        read_lines(testing::multi30k("test_2016_flickr." + lang + ".gz"));
    ASSERT_EQ(refs.size(), 1000u);
    std::vector<std::string> hyps = testing::drop_every_fifth_word(refs);
    BleuScore score = corpus_bleu(hyps, {refs});
    EXPECT_NEAR(score.score, expected, 1e-9) << lang;
    BleuOptions options{BleuTokenizer::kIntl, BleuSmooth::kExp, std::nullopt, true, false};
    EXPECT_NEAR(corpus_bleu(hyps, {refs}, options).score, expected_lc_intl, 1e-9) << lang;
    if (lang == "en") {
      EXPECT_EQ(score.format(2),
                "BLEU = 52.29 100.0/81.8/59.7/34.5 (BP = 0.816 ratio = 0.831 "
                "hyp_len = 10771 ref_len = 12955)");
    }
  }
}

}  // namespace
}  // namespace nmtzoo
