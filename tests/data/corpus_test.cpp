// SPDX-License-Identifier: MIT
#include "torch_free/data/corpus.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

TEST(ReadParallel, ReadsAlignedPairsFromPlainAndGzip) {
  TempDir dir;
  testing::write_gzip(dir.path("t.de.gz"), "Ein Hund.\nZwei Katzen.\n");
  testing::write_text(dir.path("t.en"), "A dog.\nTwo cats.\n");
  auto text = read_parallel(dir.path("t.de.gz"), dir.path("t.en"));
  ASSERT_EQ(text.size(), 2u);
  EXPECT_EQ(text.src[1], "Zwei Katzen.");
  EXPECT_EQ(text.tgt[1], "Two cats.");
  EXPECT_EQ(text.line_numbers, (std::vector<int64_t>{1, 2}));
}

TEST(ReadParallel, MismatchedLineCountsNameBothFiles) {
  TempDir dir;
  testing::write_text(dir.path("t.de"), "a\nb\nc\n");
  testing::write_text(dir.path("t.en"), "a\nb\n");
  try {
    read_parallel(dir.path("t.de"), dir.path("t.en"));
    FAIL();
  } catch (const DataError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(dir.path("t.de") + "' has 3 lines"), std::string::npos) << message;
    EXPECT_NE(message.find(dir.path("t.en") + "' has 2"), std::string::npos) << message;
  }
}

TEST(ReadParallel, InvalidUtf8NamesFileAndLine) {
  TempDir dir;
  testing::write_text(dir.path("t.de"), "gut\nschl\xe4gt\n");
  testing::write_text(dir.path("t.en"), "good\nbeats\n");
  try {
    read_parallel(dir.path("t.de"), dir.path("t.en"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path("t.de") + ":2: invalid UTF-8 at byte 5"),
              std::string::npos)
        << e.what();
  }
}

TEST(ReadParallel, SkipPolicyCountsInvalidPairs) {
  TempDir dir;
  testing::write_text(dir.path("t.de"), "gut\nschl\xe4gt\nja\n");
  testing::write_text(dir.path("t.en"), "good\nbeats\nyes\n");
  auto text = read_parallel(dir.path("t.de"), dir.path("t.en"), InvalidUtf8Policy::kSkip);
  EXPECT_EQ(text.size(), 2u);
  EXPECT_EQ(text.invalid_utf8_skipped, 1);
  EXPECT_EQ(text.lines_read, 3);
  EXPECT_EQ(text.line_numbers, (std::vector<int64_t>{1, 3}));
}

TEST(ReadParallel, MissingFileIsAnError) {
  TempDir dir;
  testing::write_text(dir.path("t.en"), "a\n");
  try {
    read_parallel(dir.path("t.de"), dir.path("t.en"));
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path("t.de")), std::string::npos);
  }
}

TEST(ReadSentences, InvalidUtf8NamesTheLine) {
  TempDir dir;
  testing::write_text(dir.path("in.txt"), "ok\n\nbad \xff\n");
  try {
    read_sentences(dir.path("in.txt"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("in.txt:3: invalid UTF-8"), std::string::npos);
  }
}

TEST(ReadSentences, ANulByteNamesTheLineInsteadOfMergingLines) {
  TempDir dir;
  const char raw[] = "Ein\0Hund.\nZwei Katzen.\nDrei.\n";
  testing::write_text(dir.path("nul.de"), std::string(raw, sizeof raw - 1));
  try {
    read_sentences(dir.path("nul.de"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path("nul.de") + ":1: a NUL byte at byte 4");
  }
}

TEST(FilterPairs, DropsAndCountsEmptyLongAndUnbalancedPairs) {
  TokenizedCorpus corpus;
  auto add = [&](size_t src_len, size_t tgt_len) {
    corpus.src.emplace_back(src_len, 7);
    corpus.tgt.emplace_back(tgt_len, 8);
  };
  add(3, 4);   // kept
  add(0, 2);   // empty
  add(11, 9);  // too long
  add(1, 5);   // ratio 5 > 3
  add(2, 6);   // ratio 3, kept
  FilterStats stats;
  auto kept = filter_pairs(corpus, FilterOptions{10, 3.0, true}, &stats);
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_EQ(stats.input, 5);
  EXPECT_EQ(stats.empty, 1);
  EXPECT_EQ(stats.too_long, 1);
  EXPECT_EQ(stats.bad_ratio, 1);
  EXPECT_EQ(stats.kept, 2);
  EXPECT_EQ(kept.tgt[1].size(), 6u);
}

}  // namespace
}  // namespace nmtzoo
