// Which queued requests lost their client, so that they can be dropped before they are decoded.
// Written by hand because cpp-httplib 0.11.4 (Debian's) gives a handler no access to its
// connection (later versions have Request::is_connection_closed): a handler's connection is the
// socket of this process with the request's two addresses, and one thread waits on all watched
// sockets at once with epoll for a hang-up, so that waiting handlers never poll.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace nmtzoo {

// One end of a connection as httplib::Request reports it (numeric host, port).
struct SocketAddress {
  std::string host;
  int port = -1;
  bool operator<(const SocketAddress& other) const { return std::tie(host, port) < std::tie(other.host, other.port); }
  bool operator==(const SocketAddress& other) const { return host == other.host && port == other.port; }
};

class DisconnectWatcher {
 public:
  // `on_hang_up(id)` runs on the watcher's thread when the client of a watched request hangs up
  // (closes its end or resets the connection).
  explicit DisconnectWatcher(std::function<void(uint64_t)> on_hang_up);
  ~DisconnectWatcher();
  DisconnectWatcher(const DisconnectWatcher&) = delete;
  DisconnectWatcher& operator=(const DisconnectWatcher&) = delete;

  // Watches the connection (local, remote) on behalf of request `id` until the guard goes. A
  // connection this process does not hold (already closed) is not watched.
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
  Watch watch(const SocketAddress& local, const SocketAddress& remote, uint64_t id);

 private:
  int find_socket(const SocketAddress& local, const SocketAddress& remote);
  void run();

  std::function<void(uint64_t)> on_hang_up_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd that wakes the thread to stop
  std::mutex mutex_;
  std::unordered_map<int, uint64_t> watched_;                       // socket -> request
  std::map<std::pair<SocketAddress, SocketAddress>, int> sockets_;  // (local, remote) -> socket, a cache
  std::thread thread_;
};

}  // namespace nmtzoo
