// SPDX-License-Identifier: MIT
// Raw HTTP over loopback sockets, for the server tests that need what an HTTP client library
// would not do (half requests, pipelining, half-closes, several source addresses).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

// A raw connection to the server (from the loopback address `from`) that has sent `request` in
// full.
inline int send_raw(int port, const std::string& request, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &address.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return -1;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return -1;
  if (::send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
    return -1;
  return fd;
}

// The answers (status, body) that arrive on `fd` until there are `count`, the server closes, or
// `timeout_s` passes. The server's answers all have a Content-Length.
inline std::vector<std::pair<int, std::string>> read_answers(int fd, size_t count,
                                                             double timeout_s) {
  std::vector<std::pair<int, std::string>> answers;
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (answers.size() < count) {
    const size_t head_end = data.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      std::smatch length;
      const std::string head = data.substr(0, head_end);
      std::regex_search(head, length, std::regex("Content-Length: ([0-9]+)", std::regex::icase));
      const size_t size = length.empty() ? 0 : std::stoul(length[1]);
      if (data.size() >= head_end + 4 + size) {
        answers.emplace_back(std::stoi(data.substr(9, 3)), data.substr(head_end + 4, size));
        data.erase(0, head_end + 4 + size);
        continue;
      }
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (wait.count() <= 0 || ::poll(&p, 1, static_cast<int>(wait.count())) <= 0) break;
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return answers;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace nmtzoo
