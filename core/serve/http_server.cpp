#include "core/serve/http_server.h"

#include <brotli/decode.h>
#include <strings.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cctype>
#include <chrono>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace nmtzoo {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr auto kLinger = std::chrono::seconds(1);  // reading a closed connection's input, at most
constexpr size_t kMaxLingerBytes = 64 << 20;  // a client sending a large body whole before it reads
constexpr size_t kReadChunk = 16384;
// The start of every answer: sent early to a client that closed its sending side while its
// request was handled, to learn whether it still reads (a half-close) or is gone (its kernel
// answers with a reset). Nothing else tells the two apart: both send the same FIN.
constexpr std::string_view kAnswerStart = "HTTP/1.1 ";

Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string_view text_of(beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::string form_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The path and query of a request target: origin-form ("/p?q"), absolute-form
// ("http://host/p?q", which a server must accept, RFC 9112 3.2.2) or "*" (OPTIONS). False for
// anything else.
bool split_target(std::string_view target, std::string& path, std::string& query) {
  if (target == "*") {
    path = "*";
    return true;
  }
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && iequals(target.substr(0, scheme.size()), scheme)) {
      const size_t end_of_authority = target.find_first_of("/?", scheme.size());
      if (end_of_authority == scheme.size()) return false;  // no host
      target = end_of_authority == std::string_view::npos ? std::string_view("/") : target.substr(end_of_authority);
      if (target.front() == '?') {
        path = "/";
        query = std::string(target.substr(1));
        return true;
      }
      break;
    }
  }
  if (target.empty() || target.front() != '/') return false;
  const size_t question = target.find('?');
  path = std::string(target.substr(0, question));
  query = question == std::string_view::npos ? "" : std::string(target.substr(question + 1));
  return true;
}

int inflate_zlib(std::string& body, size_t max) {
  z_stream stream{};
  if (::inflateInit2(&stream, 15 + 32) != Z_OK) return 400;  // zlib or gzip framing, as it comes
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(body.data());
  stream.avail_in = static_cast<uInt>(body.size());
  int status = Z_OK;
  char chunk[kReadChunk];
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = ::inflate(&stream, Z_NO_FLUSH);
    const size_t produced = sizeof chunk - stream.avail_out;
    if (out.size() + produced > max) {
      ::inflateEnd(&stream);
      return 413;
    }
    out.append(chunk, produced);
    if (status == Z_BUF_ERROR && stream.avail_in == 0) break;  // truncated
  }
  ::inflateEnd(&stream);
  if (status != Z_STREAM_END) return 400;
  body = std::move(out);
  return 0;
}

int decode_brotli(std::string& body, size_t max) {
  BrotliDecoderState* state = ::BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (state == nullptr) return 400;
  std::string out;
  size_t available_in = body.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(body.data());
  BrotliDecoderResult result = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
  uint8_t chunk[kReadChunk];
  while (result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    size_t available_out = sizeof chunk;
    uint8_t* next_out = chunk;
    result = ::BrotliDecoderDecompressStream(state, &available_in, &next_in, &available_out, &next_out, nullptr);
    const size_t produced = sizeof chunk - available_out;
    if (out.size() + produced > max) {
      ::BrotliDecoderDestroyInstance(state);
      return 413;
    }
    out.append(reinterpret_cast<const char*>(chunk), produced);
  }
  ::BrotliDecoderDestroyInstance(state);
  if (result != BROTLI_DECODER_RESULT_SUCCESS) return 400;
  body = std::move(out);
  return 0;
}

std::string serialize(const HttpResponse& res, bool head_only, bool close, bool keep_alive_said) {
  http::response<http::string_body> m{static_cast<http::status>(res.status), 11};
  for (const auto& [name, value] : res.headers) m.insert(name, value);
  if (close) {
    m.set(http::field::connection, "close");
  } else if (keep_alive_said) {
    m.set(http::field::connection, "keep-alive");  // an HTTP/1.0 client that asked for it
  }
  const bool bodiless = res.status == 204 || res.status == 304;
  if (!bodiless) {
    if (!res.body.empty()) m.set(http::field::content_type, res.content_type);
    m.body() = res.body;
    m.prepare_payload();
  }
  std::ostringstream text;
  if (head_only || bodiless) {
    text << m.base();
  } else {
    text << m;
  }
  return text.str();
}

}  // namespace

HangUp::Watch::~Watch() {
  std::lock_guard<std::mutex> lock(owner_->mutex_);
  owner_->on_hang_up_ = nullptr;
}

HangUp::Watch HangUp::watch(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!gone_) {
      on_hang_up_ = std::move(f);
      return Watch(this);
    }
  }
  f();
  return Watch(this);
}

void HangUp::hang_up() {
  std::function<void()> f;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (gone_) return;
    gone_ = true;
    f = std::move(on_hang_up_);
    on_hang_up_ = nullptr;
  }
  if (f) f();
}

bool HangUp::gone() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gone_;
}

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return "";
}

bool HttpRequest::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); });
}

void parse_form(std::string_view text, std::multimap<std::string, std::string>& params) {
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('&', start), text.size());
    const std::string_view pair = text.substr(start, end - start);
    const size_t equals = std::min(pair.find('='), pair.size());
    if (equals > 0) params.emplace(form_decode(pair.substr(0, equals)), form_decode(pair.substr(std::min(equals + 1, pair.size()))));
    start = end + 1;
  }
}

int decode_content(std::string_view coding, std::string& body, size_t max) {
  coding = trimmed(coding);
  if (coding.empty() || iequals(coding, "identity")) return 0;
  if (iequals(coding, "gzip") || iequals(coding, "x-gzip") || iequals(coding, "deflate")) return inflate_zlib(body, max);
  if (iequals(coding, "br")) return decode_brotli(body, max);
  return 415;
}

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
      : server_(server), limits_(server.limits), socket_(std::move(socket)), timer_(server.io), client_(std::move(client)) {}

  const std::string& client() const { return client_; }

  void start() { next_request(); }

  // Refused at admission: 503, then closed.
  void refuse_at_once() { refuse(503, "too many connections (from this address, or in all): retry later"); }

  // The server stops: an idle connection closes now, one with a request under way after its answer.
  void on_server_stop() {
    if (phase_ == Phase::kIdle) close();
  }

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
  void disarm() {
    ++timer_generation_;
    timer_.cancel();
  }

  void next_request() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(std::min<size_t>(limits_.max_head_bytes, UINT32_MAX)));
    parser_->body_limit(limits_.max_body_bytes);
    head_ = HttpRequest();
    head_.client = client_;
    answer_.reset();
    probe_sent_ = 0;
    close_after_ = timed_out_ = client_gone_ = false;
    if (server_.stopping && buffer_.size() == 0) return close();
    if (buffer_.size() > 0) return read_head();  // pipelined: its first byte is here
    buffer_.shrink_to_fit();  // an idle connection holds no buffer
    phase_ = Phase::kIdle;
    arm(seconds_of(limits_.idle_timeout_s), [this] { close(); });
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      if (self->phase_ == Phase::kClosed) return;
      if (ec) return self->close();
      self->read_head();  // a request's first byte, or the end of the connection
    });
  }

  void read_head() {
    phase_ = Phase::kReading;
    arm(seconds_of(limits_.request_timeout_s), [this] { time_out(); });
    http::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, size_t) {
      if (self->phase_ == Phase::kClosed) return;
      if (self->timed_out_) return self->refuse(408);
      if (ec == http::error::header_limit) return self->refuse(431);
      if (ec == http::error::body_limit) return self->refuse(413);  // its Content-Length, refused before a byte is read
      if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
          ec == asio::error::connection_reset) {
        return self->close();  // the client left; nobody to answer
      }
      if (ec == http::error::bad_content_length || ec == http::error::bad_transfer_encoding) {
        return self->refuse(400, "Content-Length with Transfer-Encoding, or two different Content-Lengths (RFC 9112 6.3)");
      }
      if (ec) return self->refuse(400, "malformed HTTP request");
      self->on_head();
    });
  }

  void time_out() {
    timed_out_ = true;
    error_code ignored;
    socket_.cancel(ignored);
  }

  void on_head() {
    const auto& message = parser_->get();
    if (!split_target(text_of(message.target()), head_.path, head_.query)) {
      return refuse(400, "malformed request target: expected a path (/translate) or an absolute URI");
    }
    head_.method = std::string(text_of(message.method_string()));
    for (const auto& field : message) {
      head_.headers.emplace_back(std::string(text_of(field.name_string())), std::string(text_of(field.value())));
    }
    parse_form(head_.query, head_.params);
    keep_alive_ = message.keep_alive();
    http10_ = message.version() < 11;
    const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
    if (head_.method != "GET" && head_.method != "HEAD" && head_.method != "POST" && head_.method != "OPTIONS") {
      return refuse(405);
    }
    if (head_.has_header("Transfer-Encoding") && !iequals(trimmed(head_.header("Transfer-Encoding")), "chunked")) {
      return refuse(501);
    }
    if (!has_body) return dispatch();
    if (!server_.handlers.reads_body(head_)) {
      close_after_ = true;  // the next bytes are this body, not a request
      return dispatch();
    }
    if (head_.header("Content-Type").rfind("multipart/form-data", 0) == 0) return refuse(415);
    if (parser_->content_length().value_or(0) > limits_.max_body_bytes) return refuse(413);
    if (iequals(trimmed(head_.header("Expect")), "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(socket_, asio::buffer(kContinue), [self = shared_from_this()](const error_code& ec, size_t) {
        if (self->phase_ == Phase::kClosed) return;
        if (ec) return self->timed_out_ ? self->refuse(408) : self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, size_t) {
      if (self->phase_ == Phase::kClosed) return;
      if (self->timed_out_) return self->refuse(408);
      if (ec == http::error::body_limit) return self->refuse(413);
      if (ec == http::error::partial_message || ec == asio::error::eof || ec == asio::error::connection_reset) {
        return self->close();
      }
      if (ec) return self->refuse(400, "malformed request body (its Content-Length, chunks or compressed data)");
      self->head_.body = std::move(self->parser_->get().body());
      self->dispatch();
    });
  }

  // Hands the request to a handler thread, and watches the connection meanwhile.
  void dispatch() {
    phase_ = Phase::kHandling;
    disarm();
    head_only_ = head_.method == "HEAD";
    head_hang_up_ = head_.hang_up;
    watch();
    asio::post(*server_.workers, [self = shared_from_this(), request = std::move(head_),
                                  guard = asio::make_work_guard(server_.io)]() mutable {
      HttpResponse res;
      self->handle(request, res);
      asio::post(self->server_.io, [self, res = std::move(res)]() mutable { self->on_answer(std::move(res)); });
    });
  }

  // On a handler thread.
  void handle(HttpRequest& request, HttpResponse& res) {
    const auto& handlers = server_.handlers;
    try {
      const int status = decode_content(request.header("Content-Encoding"), request.body, limits_.max_body_bytes);
      if (status != 0) {
        res.status = status;
        handlers.refuse(request, status == 400 ? "malformed request body (its Content-Length, chunks or compressed data)" : "", res);
      } else {
        if (request.header("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0) parse_form(request.body, request.params);
        handlers.handle(request, res);
      }
    } catch (const std::exception& e) {
      res = HttpResponse();
      res.status = 500;
      res.body = std::string("{\"error\": \"internal error\"}");
    }
    if (handlers.on_response) handlers.on_response(request, res);
  }

  // While a request is handled: bytes from the client are the next requests (kept, up to a
  // bound); its end of stream is either a half-close or a hang-up (kAnswerStart tells which); a
  // reset is a hang-up.
  void watch() {
    if (peer_shut_) return;
    if (buffer_.size() >= limits_.max_head_bytes + limits_.max_body_bytes) return;  // read on after the answer
    ++watch_ops_;
    socket_.async_read_some(buffer_.prepare(kReadChunk), [self = shared_from_this()](const error_code& ec, size_t n) {
      --self->watch_ops_;
      if (self->phase_ == Phase::kClosed) return;
      if (!ec && n > 0) {
        self->buffer_.commit(n);
        if (!self->answer_) self->watch();
      } else if (ec == asio::error::eof) {
        self->peer_shut_ = true;
        if (!self->answer_) self->probe();
      } else if (ec != asio::error::operation_aborted) {
        self->hang_up();
      }
      self->write_answer();
    });
  }

  void probe() {
    ++watch_ops_;
    asio::async_write(socket_, asio::buffer(kAnswerStart.data(), kAnswerStart.size()),
                      [self = shared_from_this()](const error_code& ec, size_t n) {
                        --self->watch_ops_;
                        self->probe_sent_ = n;
                        if (self->phase_ == Phase::kClosed) return;
                        if (ec) {
                          self->hang_up();
                        } else if (!self->answer_) {
                          ++self->watch_ops_;  // a reset, if it comes, is an error on the socket
                          self->socket_.async_wait(tcp::socket::wait_error, [self](const error_code& wait_ec) {
                            --self->watch_ops_;
                            if (self->phase_ == Phase::kClosed) return;
                            if (!wait_ec) self->hang_up();
                            self->write_answer();
                          });
                        }
                        self->write_answer();
                      });
  }

  void hang_up() {
    client_gone_ = true;
    head_hang_up_->hang_up();
  }

  void on_answer(HttpResponse res) {
    if (phase_ == Phase::kClosed) return;
    answer_ = std::move(res);
    if (watch_ops_ > 0) {
      error_code ignored;
      socket_.cancel(ignored);  // the watch ends; the answer goes once it has
    }
    write_answer();
  }

  // Refuses the request being read with `status` (its body from the application) and closes.
  void refuse(int status, std::string_view problem = "") {
    disarm();
    HttpResponse res;
    res.status = status;
    server_.handlers.refuse(head_, problem, res);
    if (server_.handlers.on_response) server_.handlers.on_response(head_, res);
    close_after_ = true;
    head_only_ = false;
    answer_ = std::move(res);
    phase_ = Phase::kHandling;
    write_answer();
  }

  void write_answer() {
    if (!answer_ || watch_ops_ > 0 || phase_ != Phase::kHandling) return;
    if (client_gone_) return close();
    const bool closing = close_after_ || !keep_alive_ || server_.stopping;
    out_ = serialize(*answer_, head_only_, closing, keep_alive_ && http10_ && !closing);
    out_.erase(0, probe_sent_);
    phase_ = Phase::kWriting;
    arm(seconds_of(limits_.request_timeout_s), [this] { close(); });  // a client that does not read
    asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this(), closing](const error_code& ec, size_t) {
      if (self->phase_ == Phase::kClosed) return;
      self->disarm();
      if (ec) return self->close();
      if (closing) return self->linger();
      self->next_request();
    });
  }

  // A lingering close: our side ends, and what the client still sends is read and dropped for a
  // while (closing with unread input would reset the connection, and the client could lose the answer).
  void linger() {
    phase_ = Phase::kLingering;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(kLinger, [this] { close(); });
    drain();
  }
  void drain() {
    socket_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](const error_code& ec, size_t n) {
      if (self->phase_ == Phase::kClosed) return;
      self->drained_ += n;
      if (ec || n == 0 || self->drained_ > kMaxLingerBytes) return self->close();
      self->drain();
    });
  }

  void close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    disarm();
    error_code ignored;
    socket_.close(ignored);
    server_.forget(this, client_);
  }

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

void ServerCore::accept() {
  acceptor.async_accept([this](const error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {  // out of descriptors, most likely: wait for some to be freed
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this](const error_code& wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

void ServerCore::admit(tcp::socket socket) {
  error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  std::string client = peer.address().to_string();
  // An answer is written as one buffer; without this, a pipelined client's next answer could
  // wait for its delayed ACK of the previous one.
  socket.set_option(tcp::no_delay(true), ec);
  size_t& mine = per_client[client];
  const bool admitted = sessions.size() < limits.max_connections && mine < limits.max_per_client;
  if (mine == 0 && !admitted) per_client.erase(client);
  auto session = std::make_shared<Session>(*this, std::move(socket), admitted ? client : "");
  if (!admitted) return session->refuse_at_once();
  ++mine;
  sessions.emplace(session.get(), session);
  session->start();
}

void ServerCore::forget(Session* session, const std::string& client) {
  if (client.empty()) return;  // refused at admission: never counted
  const auto it = sessions.find(session);
  if (it == sessions.end()) return;
  auto keep = it->second;  // alive until this returns
  sessions.erase(it);
  if (--per_client[client] == 0) per_client.erase(client);
}

struct HttpServer::Impl : ServerCore {
  using ServerCore::ServerCore;
};

HttpServer::HttpServer(const ConnectionLimits& limits, HttpHandlers handlers)
    : impl_(std::make_unique<Impl>(limits, std::move(handlers))) {
  // Each connection is a descriptor: raise the soft limit to the hard one (as Go's runtime and
  // nginx's worker_rlimit_nofile do), and keep connections below it, with room for the rest.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    const size_t room = files.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(files.rlim_cur);
    auto& max = impl_->limits.max_connections;
    max = std::max<size_t>(1, std::min(max, room > 256 ? room - 128 : room / 2));
  }
  impl_->limits.threads = std::max<size_t>(1, impl_->limits.threads);
  impl_->workers.emplace(impl_->limits.threads);
}

HttpServer::~HttpServer() {
  if (impl_->workers) impl_->workers->join();
}

int HttpServer::bind(const std::string& host, int port) {
  error_code ec;
  const auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) return -1;
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);  // not SO_REUSEPORT: a second server would share it
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.close(ec);
    return -1;
  }
  return acceptor.local_endpoint().port();
}

void HttpServer::run() {
  impl_->accept();
  impl_->io.run();
  impl_->workers->join();
}

void HttpServer::stop() {
  asio::post(impl_->io, [impl = impl_.get()] {
    if (impl->stopping) return;
    impl->stopping = true;
    error_code ignored;
    impl->acceptor.close(ignored);
    impl->accept_retry.cancel();
    const auto sessions = impl->sessions;  // (closing one erases it)
    for (const auto& [raw, s] : sessions) s->on_server_stop();
  });
}

const ConnectionLimits& HttpServer::limits() const { return impl_->limits; }

}  // namespace nmtzoo
