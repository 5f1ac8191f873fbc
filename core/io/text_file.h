// Line-oriented text input (plain or gzip), UTF-8 checks, and crash-safe file replacement.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
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

// Reads a text file line by line; gzip-compressed files are recognised by content, not name.
// Line terminators ("\n" or "\r\n") are stripped.
class LineReader {
 public:
  explicit LineReader(std::string path);  // throws IoError naming the file
  LineReader(LineReader&&) noexcept;
  ~LineReader();
  bool next(std::string& line);            // false at the end of the file
  int64_t line_number() const { return line_number_; }  // 1-based number of the last line read
  const std::string& path() const { return path_; }

 private:
  struct Handle;
  std::string path_;
  std::unique_ptr<Handle> handle_;
  int64_t line_number_ = 0;
};

std::vector<std::string> read_lines(const std::string& path);

// Byte offset of the first invalid UTF-8 sequence in `text`, or nullopt if it is valid.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Replaces `path` atomically: `write` fills a temporary file beside it, which is flushed, fsynced
// and renamed over `path`, then the directory is fsynced. A crash at any instant leaves either the
// old or the new file; a failed write (a full disk) throws IoError and leaves the old one.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace nmtzoo
