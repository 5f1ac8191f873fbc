#include "core/serve/connection_watch.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <utility>

namespace nmtzoo {
namespace {

// Numeric host and port of one end of `fd`, as httplib formats them (getnameinfo).
bool endpoint(int fd, bool peer, std::string& host, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, raw, &length) : ::getsockname(fd, raw, &length)) != 0) return false;
  char host_buffer[NI_MAXHOST];
  char port_buffer[NI_MAXSERV];
  if (::getnameinfo(raw, length, host_buffer, sizeof host_buffer, port_buffer, sizeof port_buffer,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return false;
  }
  host = host_buffer;
  port = std::stoi(port_buffer);
  return true;
}

}  // namespace

ConnectionWatch::ConnectionWatch(std::string local_addr, int local_port, std::string remote_addr, int remote_port)
    : local_addr_(std::move(local_addr)),
      local_port_(local_port),
      remote_addr_(std::move(remote_addr)),
      remote_port_(remote_port) {}

bool ConnectionWatch::peer_closed() {
  if (!searched_) {
    searched_ = true;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
      int fd = -1;
      try {
        fd = std::stoi(entry.path().filename().string());
      } catch (const std::exception&) {
        continue;
      }
      struct stat info {};
      if (::fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
      std::string host;
      int port = 0;
      if (!endpoint(fd, false, host, port) || host != local_addr_ || port != local_port_) continue;
      if (!endpoint(fd, true, host, port) || host != remote_addr_ || port != remote_port_) continue;
      fd_ = fd;
      break;
    }
  }
  if (fd_ < 0) return false;
  pollfd watched{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&watched, 1, 0) <= 0) return false;
  if (watched.revents & (POLLHUP | POLLERR | POLLNVAL)) return true;
  char byte = 0;
  const ssize_t peeked = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace nmtzoo
