// Which queued requests lost their client, so that they can be dropped before they are decoded.
// cpp-httplib 0.11.4 (Debian's) gives a handler no access to its connection (later versions have
// Request::is_connection_closed); our connection layer (http_server.h) tells a handler its socket,
// and one thread waits on all watched sockets at once with epoll for a hang-up, so that waiting
// handlers never poll.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace nmtzoo {

class DisconnectWatcher {
 public:
  // `on_hang_up(id)` runs on the watcher's thread when the client of a watched request hangs up
  // (closes its end or resets the connection).
  explicit DisconnectWatcher(std::function<void(uint64_t)> on_hang_up);
  ~DisconnectWatcher();
  DisconnectWatcher(const DisconnectWatcher&) = delete;
  DisconnectWatcher& operator=(const DisconnectWatcher&) = delete;

  // Watches the connection `fd` on behalf of request `id` until the guard goes; -1 watches none.
  class Watch {
   public:
    Watch(DisconnectWatcher& watcher, int fd) : watcher_(watcher), fd_(fd) {}
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    DisconnectWatcher& watcher_;
    int fd_;
  };
  Watch watch(int fd, uint64_t id);

 private:
  void run();

  std::function<void(uint64_t)> on_hang_up_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd that wakes the thread to stop
  std::mutex mutex_;
  std::unordered_map<int, uint64_t> watched_;  // socket -> request
  std::thread thread_;
};

}  // namespace nmtzoo
