// SPDX-License-Identifier: MIT
// Private to nmtzoo_serve (http_server.h is the interface): the connection layer's session and
// server state on Boost.Beast and Asio, shared by http_session.cpp (one connection's life) and
// http_server.cpp (accepting, limits, start and stop), with the helpers http_message.cpp defines.
#pragma once

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "libtorch/serve/http_server.h"

namespace nmtzoo::http_layer {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;

inline constexpr auto kLinger =
    std::chrono::seconds(1);  // reading a closed connection's input, at most
inline constexpr size_t kMaxLingerBytes =
    64 << 20;  // a client sending a large body whole before it reads
inline constexpr size_t kReadChunk = 16384;
// The start of every answer: sent early to a client that closed its sending side while its
// request was handled, to learn whether it still reads (a half-close) or is gone (its kernel
// answers with a reset). Nothing else tells the two apart: both send the same FIN.
inline constexpr std::string_view kAnswerStart = "HTTP/1.1 ";

inline Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

inline std::string_view text_of(beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b);
std::string_view trimmed(std::string_view s);
// The path and query of a request target: origin-form ("/p?q"), absolute-form
// ("http://host/p?q", which a server must accept, RFC 9112 3.2.2) or "*" (OPTIONS). False for
// anything else.
bool split_target(std::string_view target, std::string& path, std::string& query);
// An answer as sent: status line, headers (Connection: close when `close`), body unless
// `head_only`.
std::string serialize(const HttpResponse& res, bool head_only, bool close, bool keep_alive_said);

class Session;

// The server's state, shared with its sessions (HttpServer::Impl is private to HttpServer).
struct ServerCore {
  ServerCore(const ConnectionLimits& l, HttpHandlers h) : limits(l), handlers(std::move(h)) {}

  void accept();
  void admit(tcp::socket socket);
  void forget(Session* session, const std::string& client);

  ConnectionLimits limits;
  HttpHandlers handlers;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::optional<asio::thread_pool> workers;
  // The I/O thread's own:
  std::unordered_map<Session*, std::shared_ptr<Session>> sessions;  // admitted, open
  std::map<std::string, size_t> per_client;
  bool stopping = false;
};

// One connection, on the I/O thread (a request's handler runs on a handler thread, and its answer
// comes back here).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerCore& server, tcp::socket socket, std::string client)
      : server_(server),
        limits_(server.limits),
        socket_(std::move(socket)),
        timer_(server.io),
        client_(std::move(client)) {}

  void start() { next_request(); }

  // Refused at admission: 503, then closed.
  void refuse_at_once() {
    refuse(503, "too many connections (from this address, or in all): retry later");
  }

  // The server stops: an idle connection closes now, one with a request under way after its answer.
  void on_server_stop();

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kLingering, kClosed };

  // Runs `on_due` at `in` from now, unless re-armed or disarmed first.
  template <class F>
  void arm(Clock::duration in, F on_due) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(in);
    timer_.async_wait([self = shared_from_this(), generation, on_due](const error_code& ec) {
      if (!ec && generation == self->timer_generation_) on_due();
    });
  }
  void disarm();

  void next_request();

  void read_head();

  void time_out();

  void on_head();

  void read_body();

  // Hands the request to a handler thread, and watches the connection meanwhile.
  void dispatch();

  // On a handler thread.
  void handle(HttpRequest& request, HttpResponse& res);

  // While a request is handled: bytes from the client are the next requests (kept, up to a
  // bound); its end of stream is either a half-close or a hang-up (kAnswerStart tells which); a
  // reset is a hang-up.
  void watch();

  void probe();

  void hang_up();

  void on_answer(HttpResponse res);

  // Refuses the request being read with `status` (its body from the application) and closes.
  void refuse(int status, std::string_view problem = "");

  void write_answer();

  // A lingering close: our side ends, and what the client still sends is read and dropped for a
  // while (closing with unread input would reset the connection, and the client could lose the
  // answer).
  void linger();
  void drain();

  void close();

  ServerCore& server_;
  const ConnectionLimits& limits_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  std::string client_;
  Phase phase_ = Phase::kIdle;
  beast::flat_buffer buffer_;  // read ahead: the current request, maybe the next ones
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest head_;  // the request being read; handed to the handler whole
  std::shared_ptr<HangUp> head_hang_up_;
  bool keep_alive_ = true;
  bool http10_ = false;
  bool head_only_ = false;
  bool close_after_ = false;
  bool timed_out_ = false;
  bool peer_shut_ = false;  // the client's end of stream was read
  bool client_gone_ = false;
  int watch_ops_ = 0;  // reads, probe and waits on the socket while the request is handled
  size_t probe_sent_ = 0;
  std::optional<HttpResponse> answer_;
  std::string out_;
  std::array<char, kReadChunk> scratch_{};
  size_t drained_ = 0;

  friend struct ServerCore;
};

}  // namespace nmtzoo::http_layer
