// SPDX-License-Identifier: MIT
// nmtzoo-evaluate as users run it.
#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

class EvaluateApp : public ::testing::Test {
 protected:
  int evaluate(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    testing::write_text(dir_.path("stdin.txt"), stdin_text);
    std::vector<std::string> command{testing::bin("nmtzoo-evaluate")};
    command.insert(command.end(), args.begin(), args.end());
    return testing::run(command, dir_.path("stdin.txt"), dir_.path("out.txt"),
                        dir_.path("err.txt"));
  }
  std::string out() const { return testing::read_text(dir_.path("out.txt")); }
  std::string err() const { return testing::read_text(dir_.path("err.txt")); }
  std::string file(const std::string& name, const std::string& text) const {
    testing::write_text(dir_.path(name), text);
    return dir_.path(name);
  }
  testing::TempDir dir_;
};

TEST_F(EvaluateApp, PerfectHypothesesFromStdinScoreHundred) {
  std::string ref = file("ref.txt", "A dog runs on the grass .\nTwo men talk .\n");
  ASSERT_EQ(evaluate({ref, "-m", "bleu", "chrf"}, "A dog runs on the grass .\nTwo men talk .\n"), 0)
      << err();
  EXPECT_NE(
      out().find("BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo = 100.0"),
      std::string::npos)
      << out();
  EXPECT_NE(out().find("chrF2|"), std::string::npos) << out();
}

TEST_F(EvaluateApp, EmptyReferenceLinesAreScoredAsSacrebleuDoes) {
  // sacreBLEU >= 2.2.0 scores them (its issue #161); figures from sacreBLEU 2.6.0 on these files.
  std::string ref = file("ref.txt", "A dog runs .\n\nTwo men talk .\n");
  std::string hyp = file("hyp.txt", "A dog runs .\nsomething\nTwo men talk .\n");
  ASSERT_EQ(evaluate({ref, "-i", hyp, "-m", "bleu", "chrf"}), 0) << err();
  EXPECT_EQ(out(),
            "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo = 97.1 "
            "88.9/100.0/100.0/100.0 (BP = 1.000 ratio = 1.125 hyp_len = 9 ref_len = 8)\n"
            "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0+nmtzoo = 100.0\n");
}

TEST_F(EvaluateApp, ChineseTargetSelectsTheZhTokenizer) {
  std::string ref = file("ref.txt", "我们是中国人。\n");
  std::string hyp = file("hyp.txt", "我们是人。\n");
  ASSERT_EQ(evaluate({ref, "-i", hyp, "-l", "en-zh"}), 0) << err();
  EXPECT_EQ(out(),  // sacreBLEU 2.6.0 -l en-zh
            "BLEU|nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0+nmtzoo = 33.5 "
            "100.0/75.0/33.3/25.0 (BP = 0.670 ratio = 0.714 hyp_len = 5 ref_len = 7)\n");
  ASSERT_EQ(evaluate({ref, "-i", hyp, "-l", "en-zh", "-tok", "13a"}), 0) << err();
  EXPECT_NE(out().find("tok:13a"), std::string::npos) << out();
  EXPECT_NE(err().find("consider using the 'zh' or 'spm' tokenizer for Chinese"), std::string::npos)
      << err();
  EXPECT_EQ(evaluate({ref, "-i", hyp, "-l", "en-ja"}), 1);
  EXPECT_NE(err().find("-l en-ja selects sacreBLEU's ja-mecab tokenizer"), std::string::npos)
      << err();
  EXPECT_EQ(evaluate({ref, "-i", hyp, "-l", "zh"}), 1);
  EXPECT_NE(err().find("--language-pair 'zh' is not of the form SRC-TRG"), std::string::npos)
      << err();
}

TEST_F(EvaluateApp, TabsOnStdinAreSystemsAsInSacrebleu) {
  std::string ref = file("ref.txt", "a dog runs .\ntwo men talk .\n");
  ASSERT_EQ(evaluate({ref, "-m", "bleu", "ter"},
                     "a dog runs .\ta cat runs .\ntwo men talk .\tmen talk\n"),
            0)
      << err();
  EXPECT_NE(out().find("│ System 1 │"), std::string::npos) << out();
  EXPECT_NE(out().find("│ System 2 │"), std::string::npos) << out();
  EXPECT_NE(out().find(" - TER        nrefs:1|case:lc|tok:tercom|"), std::string::npos) << out();
  ASSERT_EQ(evaluate({ref, "--paired-bs", "--paired-bs-n", "10"},
                     "a dog runs .\ta cat runs .\ntwo men talk .\tmen talk\n"),
            0)
      << err();
  EXPECT_NE(out().find("│ Baseline │"), std::string::npos) << out();
  EXPECT_NE(out().find("Paired bootstrap resampling test with 10 resampling trials"),
            std::string::npos)
      << out();
  EXPECT_EQ(evaluate({ref}, "a\tb\nc\n"), 1);
  EXPECT_NE(err().find("<stdin>:2: 1 tab-separated systems, but the first line has 2"),
            std::string::npos)
      << err();
}

TEST_F(EvaluateApp, StatisticalTestsRefuseWhatSacrebleuRefuses) {
  std::string ref = file("ref.txt", "a dog runs .\ntwo men talk .\n");
  std::string a = file("a.txt", "a dog runs .\ntwo men talk .\n");
  std::string b = file("b.txt", "a cat runs .\nmen talk\n");
  std::string short_system = file("short.txt", "a cat runs .\n");
  EXPECT_EQ(evaluate({ref, "-i", a, "--paired-bs"}), 1);
  EXPECT_NE(err().find("paired tests need several systems"), std::string::npos) << err();
  EXPECT_EQ(evaluate({ref, "-i", a, b, "--confidence"}), 1);
  EXPECT_NE(err().find("--confidence is for one system"), std::string::npos) << err();
  EXPECT_EQ(evaluate({ref, "-i", a, b, "--sentence-level"}), 1);
  EXPECT_NE(err().find("only one system can be evaluated in sentence-level mode"),
            std::string::npos)
      << err();
  EXPECT_EQ(evaluate({ref, "-i", a, "--sentence-level", "--confidence"}), 1);
  EXPECT_NE(err().find("statistical tests are unavailable in sentence-level mode"),
            std::string::npos)
      << err();
  EXPECT_NE(evaluate({ref, "-i", a, b, "--paired-bs", "--paired-ar"}), 0);
  EXPECT_NE(err().find("excludes"), std::string::npos) << err();
  EXPECT_EQ(evaluate({ref, "-i", a, short_system, "--paired-bs"}), 1);
  EXPECT_NE(err().find("hypotheses '" + short_system + "' have 1 lines"), std::string::npos)
      << err();
  EXPECT_EQ(evaluate({ref, "-i", a, b, a}), 1);
  EXPECT_NE(err().find("is given twice"), std::string::npos) << err();
  // As in sacreBLEU, a paired test drops a repeat of the baseline.
  EXPECT_EQ(evaluate({ref, "-i", a, b, a, "--paired-ar", "--paired-ar-n", "20", "-f", "json"}), 0)
      << err();
  EXPECT_EQ(out().find("\"system\": \"" + a + "\""), std::string::npos) << out();
  EXPECT_EQ(evaluate({ref, "-i", a, b, "-f", "latex"}), 1);
  EXPECT_NE(err().find("-f latex is not supported"), std::string::npos) << err();
}

TEST_F(EvaluateApp, ABadSacrebleuSeedIsAnErrorNamingTheVariable) {
  std::string ref = file("ref.txt", "a dog runs .\n");
  testing::write_text(dir_.path("stdin.txt"), "");
  testing::Subprocess process({testing::bin("nmtzoo-evaluate"), ref, "-i", ref, "--confidence"},
                              dir_.path("stdin.txt"), dir_.path("out.txt"), dir_.path("err.txt"),
                              {"SACREBLEU_SEED=-3"});
  EXPECT_EQ(process.wait(), 1);
  EXPECT_NE(
      err().find("SACREBLEU_SEED='-3': expected a non-negative integer below 2^64, or 'none'"),
      std::string::npos)
      << err();
}

TEST_F(EvaluateApp, LineCountMismatchIsAClearError) {
  std::string ref = file("ref.txt", "one\ntwo\nthree\n");
  std::string hyp = file("hyp.txt", "one\ntwo\n");
  EXPECT_EQ(evaluate({ref, "-i", hyp}), 1);
  EXPECT_NE(err().find("line counts differ"), std::string::npos) << err();
  EXPECT_NE(err().find("hyp.txt"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
}

TEST_F(EvaluateApp, ATruncatedGzipReferenceIsAnErrorNotAShorterScore) {
  std::string text;
  for (int i = 1; i <= 1000; ++i) text += "Satz " + std::to_string(i * 7919 % 1013) + " .\n";
  const std::string ref = dir_.path("ref.txt.gz");
  testing::write_gzip(ref, text);
  const std::string whole = testing::read_text(ref);
  testing::write_text(ref, whole.substr(0, whole.size() / 2));
  std::string hyp = file("hyp.txt", text);
  EXPECT_EQ(evaluate({ref, "-i", hyp}), 1);
  EXPECT_NE(err().find(ref + ":"), std::string::npos) << err();
  EXPECT_NE(err().find(": unexpected end of the gzip stream"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
}

TEST_F(EvaluateApp, JsonOutputForMachines) {
  std::string ref = file("ref.txt", "The cat sat on the mat .\n");
  ASSERT_EQ(evaluate({ref, "--json", "-w", "2"}, "The cat sat on a mat .\n"), 0) << err();
  EXPECT_NE(out().find("\"name\": \"BLEU\""), std::string::npos) << out();
  EXPECT_NE(out().find("\"score\": "), std::string::npos) << out();
}

TEST_F(EvaluateApp, NumericFlagsRefuseNanAndInfinity) {
  std::string ref = file("ref.txt", "A dog .\n");
  for (const std::string value : {"nan", "inf", "-1"}) {
    EXPECT_NE(evaluate({ref, "-s", "floor", "-sv", value}, "A dog .\n"), 0) << value;
    EXPECT_NE(err().find("--smooth-value: expected a finite number >= 0, got '" + value + "'"),
              std::string::npos)
        << err();
    EXPECT_NE(evaluate({ref, "-m", "chrf", "--chrf-beta", value}, "A dog .\n"), 0) << value;
    EXPECT_NE(err().find("--chrf-beta: expected a finite number >= 0"), std::string::npos) << err();
  }
  ASSERT_EQ(evaluate({ref, "-s", "floor", "-sv", "0.2"}, "A dog .\n"), 0) << err();
}

// Issue 85's unbounded work: --paired-bs-n 1000000000 ran for minutes on two lines (its draws alone
// 16 GB); --confidence-n 2000000000 ended in std::bad_alloc.
TEST_F(EvaluateApp, ResampleCountsAreBoundedNamingTheFlag) {
  std::string ref = file("ref.txt", "a dog runs .\ntwo men talk .\n");
  std::string a = file("a.txt", "a dog runs .\ntwo men talk .\n");
  std::string b = file("b.txt", "a cat runs .\nmen talk\n");
  const std::vector<std::vector<std::string>> cases{{"--paired-bs", "--paired-bs-n", "1000000000"},
                                                    {"--paired-ar", "--paired-ar-n", "1000001"},
                                                    {"--paired-bs", "--paired-bs-n", "-5"}};
  for (const auto& flags : cases) {
    std::vector<std::string> args{ref, "-i", a, b};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_NE(evaluate(args), 0) << flags[1];
    EXPECT_NE(err().find(flags[1] + ": Value " + flags[2] + " not in range 0 to 1000000"),
              std::string::npos)
        << err();
  }
  EXPECT_NE(evaluate({ref, "-i", a, "--confidence", "--confidence-n", "2000000000"}), 0);
  EXPECT_NE(err().find("--confidence-n: Value 2000000000 not in range"), std::string::npos)
      << err();
  EXPECT_EQ(evaluate({ref, "-i", a, b, "--paired-bs", "--paired-bs-n", "0"}), 0) << err();
}

TEST_F(EvaluateApp, AFailingStdoutIsAnError) {
  std::string ref = file("ref.txt", "A dog .\n");
  testing::write_text(dir_.path("stdin.txt"), "A dog .\n");
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-evaluate"), ref}, dir_.path("stdin.txt"),
                         "/dev/full", dir_.path("err.txt")),
            1);
  EXPECT_NE(err().find("error: writing to stdout failed"), std::string::npos) << err();
}

TEST_F(EvaluateApp, ANulByteNamesTheLine) {
  std::string ref = file("ref.txt", "one\ntwo\n");
  const char raw[] = "one\0x\ntwo\n";
  std::string hyp = file("hyp.txt", std::string(raw, sizeof raw - 1));
  EXPECT_EQ(evaluate({ref, "-i", hyp}), 1);
  EXPECT_NE(err().find("hyp.txt:1: a NUL byte at byte 4"), std::string::npos) << err();
}

}  // namespace
}  // namespace nmtzoo
