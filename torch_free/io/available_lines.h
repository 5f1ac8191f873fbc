// SPDX-License-Identifier: MIT
// Lines from a file descriptor, handed out in chunks of whatever has already arrived, so an
// interactive user gets each line back at once while a piped file is still batched.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nmtzoo {

class AvailableLines {
 public:
  explicit AvailableLines(int fd) : fd_(fd) {}

  // Blocks for at least one line; false at the end of input. A final line without a newline
  // counts; "\r\n" endings lose their "\r". Throws IoError when reading fails.
  bool next_chunk(std::vector<std::string>& lines, size_t max_lines);

 private:
  bool readable_now() const;
  bool read_some();
  void take_complete_lines(std::vector<std::string>& lines, size_t max_lines);

  int fd_;
  std::string pending_;
  bool eof_ = false;
};

}  // namespace nmtzoo
