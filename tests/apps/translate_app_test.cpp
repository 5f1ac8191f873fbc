// nmtzoo-translate as users run it: files, pipes, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

class TranslateApp : public ::testing::Test {
 protected:
  void SetUp() override { checkpoint_ = run_.save_untrained_checkpoint(); }
  int translate(const std::vector<std::string>& extra, const std::string& input_text) {
    testing::write_text(run_.path("input.txt"), input_text);
    std::vector<std::string> args{testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run(args, run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt"));
  }
  std::string out() const { return testing::read_text(run_.path("stdout.txt")); }
  std::string err() const { return testing::read_text(run_.path("stderr.txt")); }

  testing::TinyRun run_{"transformer"};
  std::string checkpoint_;
};

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

TEST_F(TranslateApp, InvalidUtf8NamesTheLineAndWritesNothingForAFile) {
  ASSERT_EQ(translate({"-i", run_.path("input.txt")}, "alpha\nbr\xffvo\n"), 1);
  EXPECT_NE(err().find("input.txt:2: invalid UTF-8"), std::string::npos) << err();
  EXPECT_EQ(out(), "");
  ASSERT_EQ(translate({}, "alpha\nbr\xffvo\n"), 1);
  EXPECT_NE(err().find("stdin:2: invalid UTF-8"), std::string::npos) << err();
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
