#include "core/serve/connection_watch.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace nmtzoo {

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

DisconnectWatcher::Watch DisconnectWatcher::watch(int fd, uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
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
