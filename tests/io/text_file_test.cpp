// SPDX-License-Identifier: MIT
#include "torch_free/io/text_file.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

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

// The bytes of `text` gzipped (one member), and `count` numbered lines that compress poorly.
std::string gzip_bytes(const TempDir& dir, const std::string& text) {
  testing::write_gzip(dir.path("scratch.gz"), text);
  return testing::read_text(dir.path("scratch.gz"));
}

std::string numbered_lines(int count) {
  std::string text;
  for (int i = 1; i <= count; ++i) {
    text += "Zeile " + std::to_string(i) + " mit der Prüfzahl " + std::to_string(i * 7919 % 1013) +
            "\n";
  }
  return text;
}

// The message of the IoError reading the whole file throws, or "" when it reads without one.
std::string read_error(const std::string& path) {
  try {
    read_lines(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

TEST(LineReader, ATruncatedGzipIsAnErrorNamingTheFileAndTheCutLine) {
  TempDir dir;
  const std::string whole = gzip_bytes(dir, numbered_lines(1000));
  const std::string path = dir.path("t.gz");
  testing::write_text(path, whole.substr(0, whole.size() * 18 / 100));
  LineReader reader(path);
  std::string line;
  int64_t read = 0;
  try {
    while (reader.next(line)) {
      ++read;
      ASSERT_EQ(line.rfind("Zeile " + std::to_string(read) + " ", 0), 0u)
          << "whole lines only: " << line;
    }
    FAIL() << "read " << read << " lines of a truncated gzip file without an error";
  } catch (const IoError& e) {
    EXPECT_GT(read, 0);
    EXPECT_LT(read, 1000);
    EXPECT_EQ(std::string(e.what()).find(path + ":" + std::to_string(read + 1) +
                                         ": unexpected end of the gzip stream at byte " +
                                         std::to_string(whole.size() * 18 / 100) +
                                         ": the file is truncated"),
              0u)
        << e.what();
  }
  // Cut anywhere, even inside the 8-byte trailer (CRC-32 and length): never read as complete.
  const std::string small = gzip_bytes(dir, "a\nb\nc\n");
  for (size_t size = 2; size < small.size(); ++size) {
    testing::write_text(path, small.substr(0, size));
    EXPECT_NE(read_error(path).find("unexpected end of the gzip stream"), std::string::npos)
        << "cut to " << size << " of " << small.size() << " bytes: " << read_error(path);
  }
}

TEST(LineReader, ACorruptGzipIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string whole = gzip_bytes(dir, numbered_lines(1000));
  const std::string path = dir.path("c.gz");
  std::string bad_crc = whole;
  bad_crc[bad_crc.size() - 8] ^= 0x55;  // the trailer's CRC-32
  testing::write_text(path, bad_crc);
  EXPECT_EQ(read_error(path).find("'" + path + "' is corrupt: bad gzip data near byte "), 0u)
      << read_error(path);
  EXPECT_NE(read_error(path).find("(incorrect data check)"), std::string::npos) << read_error(path);

  std::string bad_length = whole;
  bad_length[bad_length.size() - 4] ^= 0x01;  // the trailer's length
  testing::write_text(path, bad_length);
  EXPECT_NE(read_error(path).find("(incorrect length check)"), std::string::npos)
      << read_error(path);

  std::string bad_data = whole;
  for (size_t i = 200; i < 260; ++i) bad_data[i] = static_cast<char>(0xff);
  testing::write_text(path, bad_data);
  EXPECT_EQ(read_error(path).find("'" + path + "' is corrupt: bad gzip data near byte "), 0u)
      << read_error(path);

  // zlib's gzread ignores what follows the last member; a reader of corpora must not.
  testing::write_text(path, whole + "eine Zeile Text danach\n");
  EXPECT_EQ(read_error(path),
            "'" + path + "' is corrupt: what follows the end of its gzip stream " + "(from byte " +
                std::to_string(whole.size() + 1) + ") is not gzip (incorrect header check)");
}

TEST(LineReader, ConcatenatedGzipMembersAreReadWhole) {
  TempDir dir;
  const std::string text = numbered_lines(1000);
  const size_t cut = text.find("Zeile 401 ");
  const std::string first = gzip_bytes(dir, text.substr(0, cut));
  const std::string second = gzip_bytes(dir, text.substr(cut));
  // As `cat a.gz b.gz` makes them, with an empty member between (bgzip ends with one).
  testing::write_text(dir.path("m.gz"), first + gzip_bytes(dir, "") + second);
  testing::write_text(dir.path("m.txt"), text);
  const auto lines = read_lines(dir.path("m.gz"));
  ASSERT_EQ(lines.size(), 1000u);
  EXPECT_EQ(lines, read_lines(dir.path("m.txt")));
  // Cut inside the second member: still an error, after the first member's 400 lines.
  testing::write_text(dir.path("m.gz"), first + second.substr(0, 20));
  EXPECT_EQ(read_error(dir.path("m.gz"))
                .find(dir.path("m.gz") + ":401: unexpected end of the gzip stream"),
            0u)
      << read_error(dir.path("m.gz"));
}

TEST(LineReader, ReadsFromAPipeAndCountsTheFileOffset) {
  TempDir dir;
  const std::string text = numbered_lines(5000);
  testing::write_text(dir.path("p.txt"), text);
  const std::string gz = gzip_bytes(dir, text);
  testing::write_text(dir.path("p.gz"), gz);
  for (const std::string name : {"p.txt", "p.gz"}) {
    LineReader reader(dir.path(name));
    std::string line;
    int64_t lines = 0;
    while (reader.next(line)) ++lines;
    EXPECT_EQ(lines, 5000) << name;
    EXPECT_EQ(reader.file_offset(), static_cast<int64_t>(testing::read_text(dir.path(name)).size()))
        << name;
  }
  // Gzip through a FIFO, whose reads may return fewer bytes than asked (the magic is two bytes).
  const std::string fifo = dir.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Should the reader stop early, the writer's next write fails (EPIPE) instead of killing the
  // test.
  auto* const previous = std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    for (char byte : gz) out.put(byte).flush();
  });
  std::string error;
  std::vector<std::string> lines;
  try {
    lines = read_lines(fifo);
  } catch (const IoError& e) {
    error = e.what();
  }
  writer.join();
  std::signal(SIGPIPE, previous);
  EXPECT_EQ(error, "");
  EXPECT_EQ(lines.size(), 5000u);
}

TEST(TextProblem, NamesInvalidUtf8FirstThenNulBytes) {
  EXPECT_FALSE(find_text_problem("Grüße"));
  EXPECT_EQ(find_text_problem(std::string("Ein\0Hund", 8))->describe(), "a NUL byte at byte 4");
  EXPECT_EQ(find_text_problem(std::string("a\xff\0", 3))->describe(), "invalid UTF-8 at byte 2");
}

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_FALSE(find_invalid_utf8("Zwei Männer spielen Fußball. 日本"));
  EXPECT_FALSE(find_invalid_utf8(""));
  EXPECT_EQ(find_invalid_utf8("ab\xff"
                              "cd"),
            2u);
  EXPECT_EQ(find_invalid_utf8("a\xc3"), 1u);          // truncated sequence
  EXPECT_EQ(find_invalid_utf8("a\xed\xa0\x80"), 1u);  // UTF-16 surrogate
  EXPECT_EQ(find_invalid_utf8("\xc0\xaf"), 0u);       // overlong encoding
}

}  // namespace
}  // namespace nmtzoo
