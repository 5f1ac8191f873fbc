// SPDX-License-Identifier: MIT
// Line-oriented text input (plain or gzip) and UTF-8 checks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nmtzoo {

struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a text file line by line; gzip-compressed files are recognised by content, not name, and
// may hold several gzip members one after the other (concatenated .gz files), read in turn.
// Lines end at "\n" only, whatever else they contain (NUL bytes included); the terminator and a
// "\r" before it are stripped. The one reader of text files: every program that reads a corpus,
// a reference or an input file reads it here, so every one of them refuses a gzip stream that is
// truncated, fails its checksum or is followed by bytes that are not gzip (an IoError naming the
// file and the line being read) instead of reading as far as it goes.
class LineReader {
 public:
  explicit LineReader(std::string path);  // throws IoError naming the file
  LineReader(LineReader&&) noexcept;
  ~LineReader();
  bool next(std::string& line);  // false at the end of the file; throws IoError
  int64_t line_number() const { return line_number_; }  // 1-based number of the last line read
  const std::string& path() const { return path_; }
  // Bytes of the file (compressed, for gzip) consumed so far, for progress against its size.
  int64_t file_offset() const;

 private:
  struct Handle;
  std::string path_;
  std::unique_ptr<Handle> handle_;
  int64_t line_number_ = 0;
};

std::vector<std::string> read_lines(const std::string& path);

// The pieces of `text` between `separator`s: n separators give n + 1 pieces, empty ones included.
std::vector<std::string> split_fields(std::string_view text, char separator);

// Byte offset of the first invalid UTF-8 sequence in `text`, or nullopt if it is valid.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Why a line is not usable text: invalid UTF-8, or a NUL byte (in practice a binary or corrupt
// file; tokenizers and C APIs would silently cut the line there).
struct TextProblem {
  size_t byte;                   // 0-based offset
  const char* what;              // "invalid UTF-8" or "a NUL byte"
  std::string describe() const;  // "a NUL byte at byte 4"
};
std::optional<TextProblem> find_text_problem(std::string_view text);

}  // namespace nmtzoo
