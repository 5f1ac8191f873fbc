// SPDX-License-Identifier: MIT
#include "torch_free/io/available_lines.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "torch_free/io/text_file.h"

namespace nmtzoo {

bool AvailableLines::next_chunk(std::vector<std::string>& lines, size_t max_lines) {
  lines.clear();
  while (lines.size() < max_lines) {
    take_complete_lines(lines, max_lines);
    if (!lines.empty() && !readable_now()) break;
    if (lines.size() >= max_lines) break;
    if (!read_some()) {
      if (!pending_.empty()) lines.push_back(std::exchange(pending_, {}));
      break;
    }
  }
  return !lines.empty();
}

bool AvailableLines::readable_now() const {
  pollfd descriptor{fd_, POLLIN, 0};
  return ::poll(&descriptor, 1, 0) > 0;
}

bool AvailableLines::read_some() {
  if (eof_) return false;
  char buffer[65536];
  ssize_t n = ::read(fd_, buffer, sizeof buffer);
  while (n < 0 && errno == EINTR) n = ::read(fd_, buffer, sizeof buffer);
  if (n < 0) throw IoError(std::string("reading stdin failed: ") + std::strerror(errno));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  pending_.append(buffer, static_cast<size_t>(n));
  return true;
}

void AvailableLines::take_complete_lines(std::vector<std::string>& lines, size_t max_lines) {
  size_t start = 0;
  for (size_t newline;
       lines.size() < max_lines && (newline = pending_.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    std::string line = pending_.substr(start, newline - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  pending_.erase(0, start);
}

}  // namespace nmtzoo
