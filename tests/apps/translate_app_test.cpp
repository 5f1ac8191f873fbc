// SPDX-License-Identifier: MIT
// nmtzoo-translate as users run it: files, pipes, bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/trained_model.h"
#include "tests/apps/translate_fixture.h"

namespace nmtzoo {
namespace {

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

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
  ASSERT_EQ(translate({"-i", run_.path("input.txt"), "-o", run_.path("out.txt")}, input), 0)
      << err();
  EXPECT_EQ(testing::read_text(run_.path("out.txt")), from_stdin);
}

TEST_F(TranslateApp, NbestListsUseTheMosesFormat) {
  ASSERT_EQ(translate({"--beam", "3", "--nbest", "3"}, "alpha\nbravo charlie\n"), 0) << err();
  EXPECT_EQ(count_lines(out()), 6u);
  EXPECT_EQ(out().rfind("0 ||| ", 0), 0u) << out();
  EXPECT_NE(out().find("\n1 ||| "), std::string::npos);
}

// Issue 85: --threads 3000 started 3,000 threads that only waited for each other (no progress).
TEST_F(TranslateApp, MoreThreadsThanCoresAreRefusedNamingTheFlag) {
  testing::write_text(run_.path("input.txt"), "alpha\n");
  ASSERT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "3000"},
                         run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt")),
            1);
  EXPECT_NE(err().find("--threads must be 0 (every core) to "), std::string::npos) << err();
  EXPECT_NE(err().find("got 3000"), std::string::npos) << err();
}

// Issue 85: a model whose activations overflow printed unknown-token marks with exit 0 (greedy), or
// ran past beam search's length limit into a backtrace.
TEST_F(TranslateApp, ScoresThatOverflowAreAnErrorNamingTheLines) {
  TrainedModel trained = load_trained_model(checkpoint_, torch::kCPU);
  testing::make_activations_overflow(*trained.model);
  const std::string overflowing = run_.path("overflowing.pt");
  save_checkpoint(overflowing, trained.config, *trained.model, nullptr, TrainingProgress{},
                  trained.tokenizers);
  for (const char* beam : {"1", "4"}) {
    EXPECT_EQ(translate({"--beam", beam}, "alpha bravo\n\ncharlie\n", overflowing), 1) << beam;
    EXPECT_NE(err().find("error: stdin: line 1, 3: the model's scores are not finite numbers"),
              std::string::npos)
        << err();
  }
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
  EXPECT_NE(err().find("--nbest: decoding.nbest (3) exceeds beam (2)"), std::string::npos) << err();
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

// A limit beyond the schema's bound is refused naming the flag (it was accepted silently); within
// it, a limit past the model's positions clamps to them instead of overflowing.
TEST_F(TranslateApp, AHugeLengthLimitIsRefusedAndALargeOneClampsToTheModel) {
  EXPECT_EQ(translate({"--beam", "1", "--max-len-b", "9223372036854775807"}, "alpha bravo\n"), 1);
  EXPECT_NE(err().find("--max-len-b: decoding.max_len_b 9.223372036854776e+18 is out of range: "
                       "expected in [0, 1048576]"),
            std::string::npos)
      << err();
  ASSERT_EQ(
      translate({"--beam", "1", "--max-len-b", "1048576", "--max-len-a", "1000"}, "alpha bravo\n"),
      0)
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
  for (const std::string& path :
       {run_.path("a_file/x.txt"), std::string("/proc/x.txt"), run_.path("")}) {
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
    std::vector<std::string> args{testing::bin("nmtzoo-translate"),
                                  "-c",
                                  checkpoint_,
                                  "--threads",
                                  "1",
                                  "-o",
                                  run_.path("out.txt")};
    if (!from_stdin) args.insert(args.end(), {"-i", run_.path("input.txt")});
    testing::Subprocess app(
        args, run_.path("input.txt"), run_.path("stdout.txt"), run_.path("stderr.txt"),
        {"LD_PRELOAD=" NMTZOO_WRITE_FAILURE_LIBRARY, "NMTZOO_FAIL_WRITES_TO=out.txt"});
    EXPECT_EQ(app.wait(), 1);
    EXPECT_NE(err().find("error: writing '" + run_.path("out.txt") +
                         "' failed: No space left on device (disk full?)"),
              std::string::npos)
        << err();
    EXPECT_EQ(testing::read_text(run_.path("out.txt")), "old\n");
  }
  // stdout on a full device.
  EXPECT_EQ(testing::run({testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "1"},
                         run_.path("input.txt"), "/dev/full", run_.path("stderr.txt")),
            1);
  EXPECT_NE(err().find("error: writing the translations to stdout failed"), std::string::npos)
      << err();
}

TEST_F(TranslateApp, AnOutputThatIsAnInputIsRefusedButAFileIsTranslatedInPlace) {
  const std::string checkpoint = testing::read_text(checkpoint_);
  EXPECT_EQ(translate({"-o", checkpoint_}, "alpha\n"), 1);
  EXPECT_NE(err().find("error: -o '" + checkpoint_ + "' is the same file as -c '" + checkpoint_ +
                       "': writing it would replace that input"),
            std::string::npos)
      << err();
  EXPECT_TRUE(testing::read_text(checkpoint_) == checkpoint);  // not EXPECT_EQ: a binary file
  const std::string input = run_.path("input.txt");
  EXPECT_EQ(translate({"-i", input, "--stats", input}, "alpha\n"), 1);
  EXPECT_NE(err().find("error: --stats '" + input + "' is the same file as -i '" + input + "'"),
            std::string::npos)
      << err();
  EXPECT_EQ(testing::read_text(input), "alpha\n");
  // The documented in-place translation: the input is read whole before the output replaces it.
  ASSERT_EQ(translate({}, "alpha bravo\ncharlie\n"), 0) << err();
  const std::string expected = out();
  testing::write_text(run_.path("in_place.txt"), "alpha bravo\ncharlie\n");
  ASSERT_EQ(translate({"-i", run_.path("in_place.txt"), "-o", run_.path("in_place.txt")}, ""), 0)
      << err();
  EXPECT_EQ(testing::read_text(run_.path("in_place.txt")), expected);
}

TEST_F(TranslateApp, AnOutputThroughASymbolicLinkKeepsTheLink) {
  testing::write_text(run_.path("real.txt"), "old\n");
  std::filesystem::create_symlink("real.txt", run_.path("link.txt"));
  ASSERT_EQ(translate({"-o", run_.path("link.txt")}, "alpha\nbravo\n"), 0) << err();
  EXPECT_TRUE(std::filesystem::is_symlink(run_.path("link.txt")));
  EXPECT_EQ(count_lines(testing::read_text(run_.path("real.txt"))), 2u);
}

std::vector<std::string> temporary_files(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) {
      found.push_back(entry.path().filename().string());
    }
  }
  return found;
}

bool wait_until(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// SIGTERM while translating into -o removes the temporary output; SIGKILL cannot, and the next
// run writing in that folder removes what the killed one left.
TEST_F(TranslateApp, AStoppedOrKilledRunLeavesNoTemporaryOutputForGood) {
  const std::string fifo = run_.path("stdin.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const int stop : {SIGTERM, SIGKILL}) {
    // Held open (for reading too, so that opening it waits for nobody), the FIFO keeps the app
    // waiting for more lines after the first.
    const int feed = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(feed, 0);
    testing::Subprocess app({testing::bin("nmtzoo-translate"), "-c", checkpoint_, "--threads", "1",
                             "-o", run_.path("out.txt")},
                            fifo, run_.path("stdout.txt"), run_.path("stderr.txt"));
    ASSERT_EQ(::write(feed, "alpha\n", 6), 6);
    ASSERT_TRUE(wait_until([&] { return !temporary_files(run_.path("")).empty(); })) << err();
    app.signal(stop);
    EXPECT_EQ(app.wait(), 128 + stop) << err();
    ::close(feed);
    EXPECT_EQ(temporary_files(run_.path("")).size(), stop == SIGTERM ? 0u : 1u);
    EXPECT_FALSE(std::filesystem::exists(run_.path("out.txt")));
  }
  ASSERT_EQ(translate({"-o", run_.path("out.txt")}, "alpha\n"), 0) << err();
  EXPECT_EQ(temporary_files(run_.path("")), std::vector<std::string>{});
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
                      "alpha bravo\ncharlie\ndelta\n"),
            0)
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
