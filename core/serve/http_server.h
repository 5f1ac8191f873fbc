// nmtzoo-serve's connections, in front of cpp-httplib 0.11.4 (Debian's), which still parses the
// requests and routes them. Left to itself that version gives each connection a thread of its
// pool from accept to close (200 clients sending their headers a byte a second held every thread;
// read timeouts are per read, so they never fired), reads a chunked or compressed body whole
// whatever its size (its payload limit checks Content-Length only), and makes a new 4 KB
// read-ahead buffer for each request of a connection, dropping whatever it had read past the
// request: the second of two pipelined requests was lost. So here, without patching the library:
//  - one thread (epoll) waits for every connection's next request head: an idle keep-alive
//    connection or a slow client holds no HTTP thread; a request reaches the `threads` HTTP
//    threads once its request line and headers are all there (at most `max_head_bytes`, 431).
//    A larger pool, or a watcher shutting sockets past a deadline, would still give every slow
//    client a thread until its deadline: N of them would again hold N threads;
//  - a request's head and body must arrive within `request_timeout_s` of its first byte (408), a
//    connection without a request is closed after `idle_timeout_s`, and an answer must be written
//    within `request_timeout_s`;
//  - at most `max_connections` connections in all and `max_per_client` from one address (503);
//  - a connection's read-ahead lives as long as the connection: pipelined requests are answered
//    in order;
//  - read_body() reads a POST body within `max_body_bytes` counted after decompression (413 as
//    soon as the bound is passed), and a connection whose request was not read whole is closed
//    after its answer (with a short drain, so that the client gets the answer, not a reset).
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>

namespace nmtzoo {

struct ConnectionLimits {
  size_t threads = 64;             // requests handled at once (serve.http_threads)
  double request_timeout_s = 10;   // from a request's first byte to its last, and for its answer
  double idle_timeout_s = 10;      // a connection with no request under way
  size_t max_connections = 1024;   // open at once, in all (lowered to what the fd limit allows)
  size_t max_per_client = 256;     // open at once from one client address
  size_t max_head_bytes = 32768;   // a request line and its headers
  size_t max_body_bytes = 1 << 20; // a body, after decompression
};

class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(const ConnectionLimits& limits);
  ~HttpServer() override;

  // Binds host:port (0: a free port) and listens with a backlog of SOMAXCONN: the port, or -1.
  int bind_listener(const std::string& host, int port);
  // Reads the body of the POST request being handled into req.body (form-encoded fields into
  // req.params): 0, or the status to answer (413 over the bound, 415 multipart, 408 past the
  // deadline, 400 malformed chunks or compressed data).
  int read_body(httplib::Request& req, const httplib::ContentReader& reader) const;
  // Runs on every answer once its headers are set (use this, not set_post_routing_handler, and
  // leave new_task_queue and set_pre_routing_handler alone: this class sets them).
  void on_response(Handler handler) { on_response_ = std::move(handler); }
  // The socket of the connection whose request this thread is handling, or -1.
  static int current_socket();
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Pool;
  bool process_and_close_socket(socket_t sock) override;  // called on the accepting thread

  ConnectionLimits limits_;
  Handler on_response_;
  Pool* pool_ = nullptr;  // while listen runs; httplib owns it as its task queue
};

}  // namespace nmtzoo
