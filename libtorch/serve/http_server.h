// SPDX-License-Identifier: MIT
// nmtzoo-serve's HTTP/1.1 connections, on Boost.Beast and Asio (Debian's libboost-dev): Beast
// parses and frames requests (RFC 9112: Content-Length with Transfer-Encoding, or two different
// Content-Lengths, are refused), Asio waits on every connection at once. What this layer adds:
//  - one I/O thread reads every connection; a request reaches the `threads` handler threads only
//    once its head and body are all there, so slow heads, slow bodies and idle keep-alive
//    connections hold no handler thread;
//  - a request's head and body must arrive within `request_timeout_s` of its first byte (408); a
//    connection without a request is closed after `idle_timeout_s`; an answer must be written
//    within `request_timeout_s`, so a client that never reads stalls only itself;
//  - at most `max_connections` in all and `max_per_client` from one address (503);
//  - bodies within `max_body_bytes`, counted as sent and again after decompression (413);
//  - pipelined requests are answered in order, one at a time per connection;
//  - every answer that ends a connection is followed by a lingering close (as nginx's): the end
//    of our side, then what the client still sends is read and dropped for a while, so that it
//    reads its 413 or 503 instead of a reset;
//  - a client that hangs up while its request waits is told to the handler (HangUp), and a
//    half-closed client (it shut its sending side after the request) is not one that hung up.
// Header hygiene: no Beast or Asio here; they are http_server.cpp's alone.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nmtzoo {

struct ConnectionLimits {
  size_t threads = 64;              // requests handled at once (serve.http_threads)
  double request_timeout_s = 10;    // from a request's first byte to its last, and for its answer
  double idle_timeout_s = 10;       // a connection with no request under way
  size_t max_connections = 10000;   // open at once, in all (lowered to what the fd limit allows)
  size_t max_per_client = 256;      // open at once from one client address
  size_t max_head_bytes = 32768;    // a request line and its headers
  size_t max_body_bytes = 1 << 20;  // a body, as sent and after decompression
};

// Whether the client of a request hung up while it was being handled. Shared by the connection
// (which calls hang_up() on its I/O thread) and the request's handler (which watches it).
class HangUp {
 public:
  // Runs `f` when the client hangs up (at once if it has) until the returned guard goes.
  class Watch {
   public:
    explicit Watch(HangUp* owner) : owner_(owner) {}
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    HangUp* owner_;
  };
  Watch watch(std::function<void()> f);
  void hang_up();

 private:
  std::mutex mutex_;
  bool gone_ = false;
  std::function<void()> on_hang_up_;
};

struct HttpRequest {
  std::string method;  // as sent: GET, POST...
  std::string path;    // without the query; the path of an absolute-form target (RFC 9112 3.2.2)
  std::string query;   // after '?', undecoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                                // decoded (Content-Encoding undone)
  std::multimap<std::string, std::string> params;  // the query's fields, then a form body's
  std::string client;                              // the peer's address
  std::shared_ptr<HangUp> hang_up = std::make_shared<HangUp>();

  // The first header `name` (any case), or "".
  std::string header(std::string_view name) const;
  bool has_header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type and -Length

  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

// What the server asks of its application.
struct HttpHandlers {
  // Answers a request whose head and body are read (on a handler thread).
  std::function<void(const HttpRequest&, HttpResponse&)> handle;
  // Whether a request with this head reads its body; when not, it is answered without reading
  // it (a file upload to a disabled endpoint) and its connection is closed after the answer.
  std::function<bool(const HttpRequest& head)> reads_body = [](const HttpRequest&) { return true; };
  // The answer to a request this layer refuses itself (400, 405, 408, 413, 415, 431, 501, 503):
  // `head` holds what was read of it (maybe nothing), `problem` what is wrong when the status
  // alone does not say it (else ""). Sets the body; the status is set already.
  std::function<void(const HttpRequest& head, std::string_view problem, HttpResponse&)> refuse;
  // Runs on every answer once its body is set (CORS headers, counters).
  std::function<void(const HttpRequest&, HttpResponse&)> on_response;
};

class HttpServer {
 public:
  HttpServer(const ConnectionLimits& limits, HttpHandlers handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (0: a free port) and listens: the port, or -1.
  int bind(const std::string& host, int port);
  // Serves until stop(): idle connections are closed, requests under way are answered (each
  // with Connection: close) first.
  void run();
  // Safe from any thread, before or during run().
  void stop();
  const ConnectionLimits& limits() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The fields of an application/x-www-form-urlencoded text (a body, or a query), added to `params`.
void parse_form(std::string_view text, std::multimap<std::string, std::string>& params);
// `body` decoded from Content-Encoding `coding` ("", identity, gzip, deflate or br), at most
// `max` bytes: 0, 413 over the bound, 415 another coding, 400 malformed compressed data.
int decode_content(std::string_view coding, std::string& body, size_t max);

}  // namespace nmtzoo
