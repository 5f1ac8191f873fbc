#include "core/serve/connection_watch.h"

#include <fmt/format.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace nmtzoo {
namespace {

// One end of `fd` (numeric, as httplib formats it with getnameinfo); empty host when `fd` is not
// a connected socket.
SocketAddress endpoint(int fd, bool peer) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, raw, &length) : ::getsockname(fd, raw, &length)) != 0) return {};
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getnameinfo(raw, length, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) return {};
  return {host, std::atoi(port)};
}

bool connects(int fd, const SocketAddress& local, const SocketAddress& remote) {
  return endpoint(fd, true) == remote && endpoint(fd, false) == local;
}

}  // namespace

DisconnectWatcher::DisconnectWatcher(std::function<void(uint64_t)> on_hang_up)
    : on_hang_up_(std::move(on_hang_up)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (epoll_fd_ < 0 || stop_fd_ < 0) throw std::runtime_error(fmt::format("epoll/eventfd: {}", std::strerror(errno)));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = stop_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &event);
  thread_ = std::thread([this] { run(); });
}

DisconnectWatcher::~DisconnectWatcher() {
  const uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) != sizeof one) std::terminate();
  thread_.join();
  ::close(stop_fd_);
  ::close(epoll_fd_);
}

int DisconnectWatcher::find_socket(const SocketAddress& local, const SocketAddress& remote) {
  const auto key = std::make_pair(local, remote);
  // Keep-alive clients send many requests over one connection: a cached socket is checked (its
  // number may have been reused by another connection since), and only a miss scans them all.
  if (auto it = sockets_.find(key); it != sockets_.end() && connects(it->second, local, remote)) return it->second;
  sockets_.clear();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
    const SocketAddress peer = endpoint(fd, true);
    if (!peer.host.empty()) sockets_[{endpoint(fd, false), peer}] = fd;
  }
  auto it = sockets_.find(key);
  return it == sockets_.end() ? -1 : it->second;
}

DisconnectWatcher::Watch DisconnectWatcher::watch(const SocketAddress& local, const SocketAddress& remote, uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  int fd = find_socket(local, remote);
  if (fd >= 0) {
    epoll_event event{};
    // Only a hang-up (EPOLLHUP and EPOLLERR are always reported), once: a pipelined next request
    // must not wake the thread.
    event.events = EPOLLRDHUP | EPOLLONESHOT;
    event.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0) {
      watched_[fd] = id;
    } else {
      fd = -1;
    }
  }
  return Watch(*this, fd);
}

DisconnectWatcher::Watch::~Watch() {
  if (fd_ < 0) return;
  std::lock_guard<std::mutex> lock(watcher_.mutex_);
  ::epoll_ctl(watcher_.epoll_fd_, EPOLL_CTL_DEL, fd_, nullptr);
  watcher_.watched_.erase(fd_);
}

void DisconnectWatcher::run() {
  epoll_event events[64];
  while (true) {
    const int count = ::epoll_wait(epoll_fd_, events, 64, -1);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return;
    for (int i = 0; i < count; ++i) {
      if (events[i].data.fd == stop_fd_) return;
      uint64_t id = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = watched_.find(events[i].data.fd);
        if (it == watched_.end()) continue;  // its request finished meanwhile
        id = it->second;
      }
      on_hang_up_(id);
    }
  }
}

}  // namespace nmtzoo
