#include "core/serve/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/serve/http_connection.h"

namespace nmtzoo {
namespace {

using Clock = Connection::Clock;
constexpr auto kLinger = std::chrono::seconds(1);  // draining a closed connection's input, at most
constexpr size_t kMaxDrained = 1 << 20;

Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

struct HttpServer::Pool : httplib::TaskQueue {
  explicit Pool(HttpServer& server) : server_(server), limits_(server.limits_) {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = wake_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
    server_.pool_ = this;
    reader_ = std::thread([this] { read_loop(); });
    for (size_t i = 0; i < limits_.threads; ++i) workers_.emplace_back([this] { work_loop(); });
  }
  ~Pool() override {
    shutdown();
    ::close(wake_fd_);
    ::close(epoll_fd_);
    server_.pool_ = nullptr;
  }

  // httplib's accept loop enqueues process_and_close_socket(sock): run at once, it admits it.
  void enqueue(std::function<void()> fn) override { fn(); }

  // Closes the connections waiting for a request, answers the complete ones and those being
  // handled (each with Connection: close), then ends the threads.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake();
    work_ready_.notify_all();
    reader_.join();
    for (auto& worker : workers_) worker.join();
  }

  void admit(int fd) {
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    int port = 0;
    socket_endpoint(fd, true, c->client, port);
    bool admitted = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t& mine = per_client_[c->client];
      admitted = open_ < limits_.max_connections && mine < limits_.max_per_client;
      if (admitted) ++open_, ++mine;
      if (mine == 0) per_client_.erase(c->client);
    }
    if (!admitted) {
      send_own_answer(fd, 503, "Service Unavailable", "too many connections (from this address, or in all): retry later");
      ::close(fd);
      return;
    }
    // An answer is written as its head, then its body: with Nagle's algorithm the body waited for
    // the client's delayed ACK of the head (40 ms a request on Linux).
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    c->deadline = Clock::now() + seconds_of(limits_.idle_timeout_s);
    hand_to_reader(std::move(c));
  }

 private:
  void wake() {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }

  void close(std::unique_ptr<Connection> c) {
    ::close(c->fd);
    std::lock_guard<std::mutex> lock(mutex_);
    --open_;
    if (--per_client_[c->client] == 0) per_client_.erase(c->client);
  }

  void hand_to_reader(std::unique_ptr<Connection> c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!reader_done_) {
        incoming_.push_back(std::move(c));
        c = nullptr;
      }
    }
    if (c) return close(std::move(c));
    wake();
  }

  // Ends a connection: an answer of our own if any, then the end of our side, then a drain of
  // what the client still sends (closing with unread input would reset the connection, and the
  // client could lose the answer).
  void finish(std::unique_ptr<Connection> c, int status = 0, const char* reason = "", const std::string& message = "") {
    if (status != 0) send_own_answer(c->fd, status, reason, message);
    ::shutdown(c->fd, SHUT_WR);
    c->state = Connection::State::kDraining;
    c->deadline = Clock::now() + kLinger;
    hand_to_reader(std::move(c));
  }

  void read_loop() {
    std::vector<epoll_event> events(64);
    while (true) {
      std::deque<std::unique_ptr<Connection>> arrived;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        arrived.swap(incoming_);
        reader_done_ = stopping_;
      }
      for (auto& c : arrived) {
        epoll_event event{};
        event.events = EPOLLIN | EPOLLRDHUP;
        event.data.fd = c->fd;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &event);
        const int fd = c->fd;
        const bool ready = c->state != Connection::State::kDraining && c->head_complete();
        watched_[fd] = std::move(c);
        if (ready && !reader_done_) dispatch(fd);  // handed back with a request read ahead
      }
      if (reader_done_) break;  // (the HTTP threads end once the requests handed to them are answered)
      Clock::time_point next = Clock::now() + std::chrono::seconds(60);
      for (const auto& [fd, c] : watched_) next = std::min(next, c->deadline);
      const int count = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), millis_until(next));
      for (int i = 0; i < count; ++i) {
        const int fd = events[static_cast<size_t>(i)].data.fd;
        if (fd == wake_fd_) {
          uint64_t value;
          (void)!::read(wake_fd_, &value, sizeof value);
        } else if (watched_.count(fd) != 0) {
          on_readable(fd);
        }
      }
      expire();
    }
    for (auto& [fd, c] : watched_) close(std::move(c));
    watched_.clear();
    work_ready_.notify_all();
  }

  std::unique_ptr<Connection> unwatch(int fd) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    auto c = std::move(watched_[fd]);
    watched_.erase(fd);
    return c;
  }

  void on_readable(int fd) {
    Connection& c = *watched_[fd];
    if (c.state == Connection::State::kDraining) {
      if (!c.drain(kMaxDrained)) close(unwatch(fd));
      return;
    }
    const bool open = c.read_available(limits_.max_head_bytes, seconds_of(limits_.request_timeout_s));
    if (c.head_complete()) return dispatch(fd);  // (a client that half-closed still gets its answer)
    if (!open) return close(unwatch(fd));
    if (c.in.size() >= limits_.max_head_bytes) {
      finish(unwatch(fd), 431, "Request Header Fields Too Large",
             "the request line and headers are over " + std::to_string(limits_.max_head_bytes) + " bytes");
    }
  }

  void expire() {
    const auto now = Clock::now();
    std::vector<int> due;
    for (const auto& [fd, c] : watched_) {
      if (c->deadline <= now) due.push_back(fd);
    }
    for (int fd : due) {
      auto c = unwatch(fd);
      if (c->state != Connection::State::kHead) {
        close(std::move(c));  // idle, or drained long enough
      } else {
        finish(std::move(c), 408, "Request Timeout",
               "the request did not arrive whole within serve.read_timeout_s (" + seconds_text(limits_.request_timeout_s) + " s)");
      }
    }
  }

  void dispatch(int fd) {
    auto c = unwatch(fd);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      work_.push_back(std::move(c));
    }
    work_ready_.notify_one();
  }

  void work_loop() {
    while (true) {
      std::unique_ptr<Connection> c;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_ready_.wait(lock, [this] { return reader_done_ || !work_.empty(); });
        if (work_.empty()) return;
        c = std::move(work_.front());
        work_.pop_front();
      }
      serve(std::move(c));
    }
  }

  bool stopping() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopping_;
  }

  // Answers the connection's requests while whole ones are read ahead (pipelining), then gives it
  // back to the reader, or closes it.
  void serve(std::unique_ptr<Connection> c) {
    while (true) {
      c->parsed = c->body_read = c->close = c->timed_out = false;
      c->answer_deadline = {};
      ConnectionStream stream(*c, c->start + seconds_of(limits_.request_timeout_s), limits_.request_timeout_s);
      bool client_closes = false;
      current_connection() = c.get();
      const bool answered = server_.process_request(stream, stopping(), client_closes, nullptr);
      current_connection() = nullptr;
      if (!answered || client_closes || c->close || stopping()) return finish(std::move(c));
      c->in.erase(0, c->used);
      c->used = 0;
      c->start = Clock::now();
      if (!c->head_complete()) break;
    }
    c->state = c->in.empty() ? Connection::State::kIdle : Connection::State::kHead;
    c->deadline = c->in.empty() ? Clock::now() + seconds_of(limits_.idle_timeout_s)
                                : c->start + seconds_of(limits_.request_timeout_s);
    hand_to_reader(std::move(c));
  }

  HttpServer& server_;
  const ConnectionLimits& limits_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: connections for the reader, or stop
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<std::unique_ptr<Connection>> incoming_;  // for the reader
  std::deque<std::unique_ptr<Connection>> work_;      // complete request heads, for the HTTP threads
  std::map<std::string, size_t> per_client_;
  size_t open_ = 0;
  bool stopping_ = false;
  bool reader_done_ = false;
  std::unordered_map<int, std::unique_ptr<Connection>> watched_;  // the reader's own
  std::thread reader_;
  std::vector<std::thread> workers_;
};

HttpServer::HttpServer(const ConnectionLimits& limits) : limits_(limits) {
  // httplib 0.11.4 answers 500 for a socket at or above FD_SETSIZE (its own streams select()),
  // and accept fails at the process's limit: keep connections well below both.
  rlimit files{};
  size_t room = FD_SETSIZE;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) room = std::min<size_t>(room, files.rlim_cur);
  limits_.max_connections = std::max<size_t>(1, std::min(limits_.max_connections, room > 128 ? room - 128 : room / 2));
  new_task_queue = [this] { return new Pool(*this); };
  // SO_REUSEADDR, not httplib's default SO_REUSEPORT, under which a second server would share the port.
  set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, limits_.idle_timeout_s)));  // in the Keep-Alive header
  set_keep_alive_max_count(1000000);
  set_payload_max_length(limits_.max_body_bytes);
  // Methods whose body httplib would read whole, unbounded, are refused before it does.
  set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (current_connection() != nullptr) current_connection()->parsed = true;
    if (req.method == "GET" || req.method == "HEAD" || req.method == "POST" || req.method == "OPTIONS") {
      return HandlerResponse::Unhandled;
    }
    res.status = 405;
    return HandlerResponse::Handled;
  });
  // Keep the connection only when the request was read whole: the next bytes start the next one.
  set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (on_response_) on_response_(req, res);
    if (current_connection() == nullptr) return;
    current_connection()->answer_deadline = Clock::now() + seconds_of(limits_.request_timeout_s);
    const bool bodiless = !req.has_header("Transfer-Encoding") &&
                          (!req.has_header("Content-Length") || req.get_header_value("Content-Length") == "0");
    if (!current_connection()->parsed || !(current_connection()->body_read || bodiless) || svr_sock_ == INVALID_SOCKET) {
      current_connection()->close = true;  // (INVALID_SOCKET: the server is stopping)
    }
    if (current_connection()->close) {
      res.headers.erase("Keep-Alive");
      res.headers.erase("Connection");
      res.set_header("Connection", "close");
    }
  });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind_listener(const std::string& host, int port) {
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  // Debian's library listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when it was
  // built): 64 clients connecting at once saw resets. listen() again only raises the backlog.
  if (bound >= 0) ::listen(svr_sock_, SOMAXCONN);
  return bound;
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  pool_->admit(sock);
  return true;
}

int HttpServer::current_socket() { return current_connection() == nullptr ? -1 : current_connection()->fd; }

int HttpServer::read_body(httplib::Request& req, const httplib::ContentReader& reader) const {
  return read_request_body(req, reader, limits_.max_body_bytes);
}

}  // namespace nmtzoo
