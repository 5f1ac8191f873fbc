#include "core/io/text_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

TEST(LineReader, ReadsPlainAndGzipIdentically) {
  TempDir dir;
  const std::string text = "eins\r\nzwei\n\ndrei ohne Ende";
  testing::write_text(dir.path("a.txt"), text);
  testing::write_gzip(dir.path("a.txt.gz"), text);
  std::vector<std::string> expected{"eins", "zwei", "", "drei ohne Ende"};
  EXPECT_EQ(read_lines(dir.path("a.txt")), expected);
  EXPECT_EQ(read_lines(dir.path("a.txt.gz")), expected);
}

TEST(LineReader, ReadsLinesLongerThanItsBuffer) {
  TempDir dir;
  std::string long_line(100000, 'x');
  testing::write_gzip(dir.path("long.gz"), long_line + "\nshort\n");
  auto lines = read_lines(dir.path("long.gz"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], long_line);
  EXPECT_EQ(lines[1], "short");
}

TEST(LineReader, CountsLines) {
  TempDir dir;
  testing::write_text(dir.path("a.txt"), "a\nb\n");
  LineReader reader(dir.path("a.txt"));
  std::string line;
  ASSERT_TRUE(reader.next(line));
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(reader.line_number(), 2);
  EXPECT_FALSE(reader.next(line));
}

TEST(LineReader, MissingFileNamesThePath) {
  try {
    LineReader reader("/nonexistent/corpus.de.gz");
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus.de.gz"), std::string::npos);
  }
}

TEST(LineReader, LinesEndAtNewlinesOnlyAndKeepNulBytes) {
  TempDir dir;
  const char raw[] = "Ein\0Hund.\nZwei Katzen.\nDrei.\n";
  const std::string text(raw, sizeof raw - 1);
  testing::write_text(dir.path("nul.de"), text);
  testing::write_gzip(dir.path("nul.de.gz"), text);
  std::vector<std::string> expected{std::string("Ein\0Hund.", 9), "Zwei Katzen.", "Drei."};
  EXPECT_EQ(read_lines(dir.path("nul.de")), expected);
  EXPECT_EQ(read_lines(dir.path("nul.de.gz")), expected);
}

TEST(LineReader, ADirectoryIsNamedAsOne) {
  TempDir dir;
  try {
    LineReader reader(dir.path());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + dir.path() + "': it is a directory");
  }
}

TEST(TextProblem, NamesInvalidUtf8FirstThenNulBytes) {
  EXPECT_FALSE(find_text_problem("Grüße"));
  EXPECT_EQ(find_text_problem(std::string("Ein\0Hund", 8))->describe(), "a NUL byte at byte 4");
  EXPECT_EQ(find_text_problem(std::string("a\xff\0", 3))->describe(), "invalid UTF-8 at byte 2");
}

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_FALSE(find_invalid_utf8("Zwei Männer spielen Fußball. 日本"));
  EXPECT_FALSE(find_invalid_utf8(""));
  EXPECT_EQ(find_invalid_utf8("ab\xff" "cd"), 2u);
  EXPECT_EQ(find_invalid_utf8("a\xc3"), 1u);                // truncated sequence
  EXPECT_EQ(find_invalid_utf8("a\xed\xa0\x80"), 1u);        // UTF-16 surrogate
  EXPECT_EQ(find_invalid_utf8("\xc0\xaf"), 0u);             // overlong encoding
}

}  // namespace
}  // namespace nmtzoo
