// nmtzoo-translate as users run it: files, pipes, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/apps/translate_fixture.h"

namespace nmtzoo {
namespace {

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

using TranslateApp = testing::TranslateAppFixture;

TEST_F(TranslateApp, EveryInputLineGivesOneOutputLineEvenEmptyOnes) {
  const std::string input = "alpha bravo\n\ncharlie\n\n\ndelta echo golf\n";
  ASSERT_EQ(translate({}, input), 0) << err();
  EXPECT_EQ(count_lines(out()), 6u) << out();
  std::istringstream lines(out());
  std::vector<std::string> outputs;
  for (std::string line; std::getline(lines, line);) outputs.push_back(line);
  EXPECT_EQ(outputs[1], "");
  EXPECT_EQ(outputs[3], "");
  EXPECT_NE(err().find("translated 6 sentences"), std::string::npos) << err();
}

TEST_F(TranslateApp, FileInputAndOutputFileMatchTheStdinPath) {
  const std::string input = "alpha bravo\n\ncharlie delta\nlast line without newline";
  ASSERT_EQ(translate({}, input), 0) << err();
  std::string from_stdin = out();
  EXPECT_EQ(count_lines(from_stdin), 4u);
  ASSERT_EQ(translate({"-i", run_.path("input.txt"), "-o", run_.path("out.txt")}, input), 0) << err();
  EXPECT_EQ(testing::read_text(run_.path("out.txt")), from_stdin);
}

TEST_F(TranslateApp, NbestListsUseTheMosesFormat) {
  ASSERT_EQ(translate({"--beam", "3", "--nbest", "3"}, "alpha\nbravo charlie\n"), 0) << err();
  EXPECT_EQ(count_lines(out()), 6u);
  EXPECT_EQ(out().rfind("0 ||| ", 0), 0u) << out();
  EXPECT_NE(out().find("\n1 ||| "), std::string::npos);
}

TEST_F(TranslateApp, DecodingFlagsAreSchemaKeysCheckedOnce) {
  // --beam and --set decoding.beam are one key: the same translation.
  ASSERT_EQ(translate({"--beam", "2"}, "alpha bravo\n"), 0) << err();
  const std::string by_flag = out();
  ASSERT_EQ(translate({"--set", "decoding.beam=2"}, "alpha bravo\n"), 0) << err();
  EXPECT_EQ(out(), by_flag);
  // Values go through the schema's parser and range check, naming the flag and the key.
  ASSERT_EQ(translate({"--beam", "0"}, "alpha\n"), 1);
  EXPECT_NE(err().find("--beam: decoding.beam 0 is out of range"), std::string::npos) << err();
  ASSERT_EQ(translate({"--length-penalty", "long"}, "alpha\n"), 1);
  EXPECT_NE(err().find("--length-penalty: decoding.length_penalty"), std::string::npos) << err();
  // Cross-key rules are the config's, stated once.
  ASSERT_EQ(translate({"--beam", "2", "--nbest", "3"}, "alpha\n"), 1);
  EXPECT_NE(err().find("--nbest: decoding.nbest (3) exceeds decoding.beam (2)"), std::string::npos)
      << err();
  // --set takes decoding keys only.
  EXPECT_NE(translate({"--set", "training.lr=0.1"}, "alpha\n"), 0);
  EXPECT_NE(err().find("decoding.*"), std::string::npos) << err();
}

TEST_F(TranslateApp, EveryFlagIsCheckedBeforeAnyWork) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--beam", "-1"}, "decoding.beam -1 is out of range"},
      {{"--beam", "100000"}, "decoding.beam 100000 is out of range"},
      {{"--nbest", "0"}, "decoding.nbest 0 is out of range"},
      {{"--alpha", "nan"}, "decoding.alpha expects a number, got 'nan'"},
      {{"--alpha", "inf"}, "decoding.alpha expects a number, got 'inf'"},
      {{"--alpha", "-1"}, "decoding.alpha -1 is out of range"},
      {{"--max-len-a", "-1"}, "decoding.max_len_a -1 is out of range"},
      {{"--max-len-b", "-5"}, "decoding.max_len_b -5 is out of range"},
      {{"--batch-tokens", "0"}, "decoding.batch_tokens 0 is out of range"},
      {{"--threads", "-1"}, "--threads"},
      {{"--attention-layer", "1"}, "--attention-layer requires --attention-svg"},
      {{"--attention-svg", "plots", "--attention-layer", "-5"},
       "--attention-layer -5: model transformer has 1 decoder attention layer(s); give 0..0"},
      {{"--attention-svg", "plots", "--attention-layer", "1"}, "--attention-layer 1: model"},
      {{"--attention-svg", "plots", "--attention-head", "1"},
       "--attention-head needs --attention-layer"},
      {{"--attention-svg", "plots", "--attention-layer", "0", "--attention-head", "2"},
       "--attention-head 2: each layer of model transformer has 2 head(s); give 0..1"},
  };
  for (const auto& [flags, message] : cases) {
    EXPECT_NE(translate(flags, "alpha\n"), 0) << flags[0];
    EXPECT_NE(err().find(message), std::string::npos) << err();
    EXPECT_EQ(err().find("frame #"), std::string::npos) << err();
    EXPECT_EQ(out(), "");
  }
}

TEST_F(TranslateApp, AHugeLengthLimitClampsToTheModelInsteadOfOverflowing) {
  ASSERT_EQ(translate({"--beam", "1", "--max-len-b", "9223372036854775807"}, "alpha bravo\n"), 0)
      << err();
  const std::string clamped = out();
  ASSERT_EQ(translate({"--beam", "1", "--max-len-b", "1000"}, "alpha bravo\n"), 0) << err();
  EXPECT_EQ(clamped, out());
}

TEST_F(TranslateApp, InvalidUtf8NamesTheLineAndWritesNothingForAFile) {
  ASSERT_EQ(translate({"-i", run_.path("input.txt")}, "alpha\nbr\xffvo\n"), 1);
  EXPECT_NE(err().find("input.txt:2: invalid UTF-8"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
  ASSERT_EQ(translate({}, "alpha\nbr\xffvo\n"), 1);
  EXPECT_NE(err().find("stdin:2: invalid UTF-8"), std::string::npos) << err();
}

TEST_F(TranslateApp, ANulByteNamesTheLineInsteadOfMergingTwoLines) {
  const char raw[] = "alpha\0bravo\ncharlie\ndelta\n";
  const std::string input(raw, sizeof raw - 1);
  ASSERT_EQ(translate({"-i", run_.path("input.txt")}, input), 1);
  EXPECT_NE(err().find("input.txt:1: a NUL byte at byte 6"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
  ASSERT_EQ(translate({}, input), 1);
  EXPECT_NE(err().find("stdin:1: a NUL byte at byte 6"), std::string::npos) << err();
}

TEST_F(TranslateApp, AnUnwritableOutputFailsBeforeAnyWorkNamingThePath) {
  testing::write_text(run_.path("a_file"), "");
  for (const std::string& path : {run_.path("a_file/x.txt"), std::string("/proc/x.txt"), run_.path("")}) {
    for (bool from_stdin : {true, false}) {
      std::vector<std::string> args{"-o", path};
      if (!from_stdin) args = {"-i", run_.path("input.txt"), "-o", path};
      EXPECT_EQ(translate(args, "alpha\n"), 1) << path;
      EXPECT_NE(err().find("error: cannot write '" + path + "'"), std::string::npos) << err();
      EXPECT_EQ(err().find("translated"), std::string::npos) << err();
    }
  }
}

TEST_F(TranslateApp, AFailedRunOnStdinLeavesTheOldOutputFileIntact) {
  testing::write_text(run_.path("out.txt"), "old\n");
  std::string input;
  for (int i = 0; i < 30; ++i) input += "alpha bravo\n";
  input += "br\xffvo\n";
  EXPECT_EQ(translate({"-o", run_.path("out.txt"), "--buffer-lines", "4"}, input), 1);
  EXPECT_NE(err().find("stdin:31: invalid UTF-8"), std::string::npos) << err();
  EXPECT_EQ(testing::read_text(run_.path("out.txt")), "old\n");
  for (const auto& entry : std::filesystem::directory_iterator(run_.path(""))) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(TranslateApp, FailingWritesExitNonZeroNamingTheOutput) {
  testing::write_text(run_.path("input.txt"), "alpha\nbravo\n");
  testing::write_text(run_.path("out.txt"), "old\n");
  for (bool from_stdin : {true, false}) {
    std::vector<std::string> args{testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads",
                                  "1", "-o", run_.path("out.txt")};
    if (!from_stdin) args.insert(args.end(), {"-i", run_.path("input.txt")});
    testing::Subprocess app(args, run_.path("input.txt"), run_.path("stdout.txt"),
                            run_.path("stderr.txt"),
                            {"LD_PRELOAD=" NMTZOO_WRITE_FAILURE_LIBRARY,
                             "NMTZOO_FAIL_WRITES_TO=out.txt"});
    EXPECT_EQ(app.wait(), 1);
    EXPECT_NE(err().find("error: writing '" + run_.path("out.txt") +
                         "' failed: No space left on device (disk full?)"),
              std::string::npos) << err();
    EXPECT_EQ(testing::read_text(run_.path("out.txt")), "old\n");
  }
  // stdout on a full device.
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "1"},
                         run_.path("input.txt"), "/dev/full", run_.path("stderr.txt")),
            1);
  EXPECT_NE(err().find("error: writing the translations to stdout failed"), std::string::npos)
      << err();
}

TEST_F(TranslateApp, VeryLongLinesAreTruncatedWithAWarning) {
  std::string long_line;
  for (int i = 0; i < 300; ++i) long_line += "alpha ";
  ASSERT_EQ(translate({}, "bravo\n" + long_line + "\n"), 0) << err();
  EXPECT_EQ(count_lines(out()), 2u);
  EXPECT_NE(err().find("warning: line 2 is longer than the model accepts"), std::string::npos)
      << err();
}

TEST_F(TranslateApp, MissingCheckpointIsAnErrorBeforeAnyOutput) {
  testing::write_text(run_.path("input.txt"), "alpha\n");
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", run_.path("nope.pt")},
                         run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt")),
            1);
  EXPECT_EQ(out(), "");
  EXPECT_NE(err().find("nope.pt' does not exist"), std::string::npos) << err();
}

TEST_F(TranslateApp, WritesAttentionHeatmaps) {
  ASSERT_EQ(translate({"--attention-svg", run_.path("plots"), "--attention-count", "2"},
                      "alpha bravo\ncharlie\ndelta\n"), 0)
      << err();
  std::string svg = testing::read_text(run_.path("plots/attention_0001.svg"));
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("&lt;/s&gt;"), std::string::npos) << "axis labels include the pieces";
  EXPECT_TRUE(std::filesystem::exists(run_.path("plots/attention_0002.svg")));
  EXPECT_FALSE(std::filesystem::exists(run_.path("plots/attention_0003.svg")));
}

TEST(TranslateAppWithoutAttention, HeatmapsAreSkippedWithAWarningAndEveryLineTranslated) {
  testing::TinyRun run("rnn_encdec");
  const std::string checkpoint = run.save_untrained_checkpoint();
  testing::write_text(run.path("input.txt"), "alpha bravo\ncharlie\n");
  for (const std::string beam : {"1", "3"}) {
    ASSERT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint, "--threads", "1",
                            "--beam", beam, "--attention-svg", run.path("plots")},
                           run.path("input.txt"), run.path("stdout.txt"), run.path("stderr.txt")),
              0)
        << testing::read_text(run.path("stderr.txt"));
    EXPECT_EQ(count_lines(testing::read_text(run.path("stdout.txt"))), 2u);
    const std::string err = testing::read_text(run.path("stderr.txt"));
    EXPECT_NE(err.find("model rnn_encdec has no attention; --attention-svg writes no heatmaps"),
              std::string::npos)
        << err;
    EXPECT_FALSE(std::filesystem::exists(run.path("plots/attention_0001.svg")));
  }
}

}  // namespace
}  // namespace nmtzoo
