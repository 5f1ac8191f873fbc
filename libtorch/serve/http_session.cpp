// SPDX-License-Identifier: MIT
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>

#include "libtorch/serve/http_session.h"

namespace nmtzoo::http_layer {

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

void Session::on_server_stop() {
  if (phase_ == Phase::kIdle) close();
}

void Session::disarm() {
  ++timer_generation_;
  timer_.cancel();
}

void Session::next_request() {
  parser_.emplace();
  parser_->header_limit(
      static_cast<uint32_t>(std::min<size_t>(limits_.max_head_bytes, UINT32_MAX)));
  parser_->body_limit(limits_.max_body_bytes);
  head_ = HttpRequest();
  head_.client = client_;
  answer_.reset();
  probe_sent_ = 0;
  close_after_ = timed_out_ = client_gone_ = false;
  if (server_.stopping && buffer_.size() == 0) return close();
  if (buffer_.size() > 0) return read_head();  // pipelined: its first byte is here
  buffer_.shrink_to_fit();                     // an idle connection holds no buffer
  phase_ = Phase::kIdle;
  arm(seconds_of(limits_.idle_timeout_s), [this] { close(); });
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->phase_ == Phase::kClosed) return;
    if (ec) return self->close();
    self->read_head();  // a request's first byte, or the end of the connection
  });
}

void Session::read_head() {
  phase_ = Phase::kReading;
  arm(seconds_of(limits_.request_timeout_s), [this] { time_out(); });
  http::async_read_header(
      socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, size_t) {
        if (self->phase_ == Phase::kClosed) return;
        if (self->timed_out_) return self->refuse(408);
        if (ec == http::error::header_limit) return self->refuse(431);
        if (ec == http::error::body_limit)
          return self->refuse(413);  // its Content-Length, refused before a byte is read
        if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
            ec == asio::error::eof || ec == asio::error::connection_reset) {
          return self->close();  // the client left; nobody to answer
        }
        if (ec == http::error::bad_content_length || ec == http::error::bad_transfer_encoding) {
          return self->refuse(400,
                              "Content-Length with Transfer-Encoding, or two different "
                              "Content-Lengths (RFC 9112 6.3)");
        }
        if (ec) return self->refuse(400, "malformed HTTP request");
        self->on_head();
      });
}

void Session::time_out() {
  timed_out_ = true;
  error_code ignored;
  socket_.cancel(ignored);
}

void Session::on_head() {
  const auto& message = parser_->get();
  if (!split_target(text_of(message.target()), head_.path, head_.query)) {
    return refuse(400, "malformed request target: expected a path (/translate) or an absolute URI");
  }
  head_.method = std::string(text_of(message.method_string()));
  for (const auto& field : message) {
    head_.headers.emplace_back(std::string(text_of(field.name_string())),
                               std::string(text_of(field.value())));
  }
  parse_form(head_.query, head_.params);
  keep_alive_ = message.keep_alive();
  http10_ = message.version() < 11;
  const bool has_body = parser_->chunked() || parser_->content_length().value_or(0) > 0;
  if (head_.method != "GET" && head_.method != "HEAD" && head_.method != "POST" &&
      head_.method != "OPTIONS") {
    return refuse(405);
  }
  if (head_.has_header("Transfer-Encoding") &&
      !iequals(trimmed(head_.header("Transfer-Encoding")), "chunked")) {
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
    asio::async_write(socket_, asio::buffer(kContinue),
                      [self = shared_from_this()](const error_code& ec, size_t) {
                        if (self->phase_ == Phase::kClosed) return;
                        if (ec) return self->timed_out_ ? self->refuse(408) : self->close();
                        self->read_body();
                      });
    return;
  }
  read_body();
}

void Session::read_body() {
  http::async_read(
      socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, size_t) {
        if (self->phase_ == Phase::kClosed) return;
        if (self->timed_out_) return self->refuse(408);
        if (ec == http::error::body_limit) return self->refuse(413);
        if (ec == http::error::partial_message || ec == asio::error::eof ||
            ec == asio::error::connection_reset) {
          return self->close();
        }
        if (ec)
          return self->refuse(
              400, "malformed request body (its Content-Length, chunks or compressed data)");
        self->head_.body = std::move(self->parser_->get().body());
        self->dispatch();
      });
}

void Session::dispatch() {
  phase_ = Phase::kHandling;
  disarm();
  head_only_ = head_.method == "HEAD";
  head_hang_up_ = head_.hang_up;
  watch();
  asio::post(*server_.workers, [self = shared_from_this(), request = std::move(head_),
                                guard = asio::make_work_guard(server_.io)]() mutable {
    HttpResponse res;
    self->handle(request, res);
    asio::post(self->server_.io,
               [self, res = std::move(res)]() mutable { self->on_answer(std::move(res)); });
  });
}

void Session::handle(HttpRequest& request, HttpResponse& res) {
  const auto& handlers = server_.handlers;
  try {
    const int status =
        decode_content(request.header("Content-Encoding"), request.body, limits_.max_body_bytes);
    if (status != 0) {
      res.status = status;
      handlers.refuse(request,
                      status == 400
                          ? "malformed request body (its Content-Length, chunks or compressed data)"
                          : "",
                      res);
    } else {
      if (request.header("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0)
        parse_form(request.body, request.params);
      handlers.handle(request, res);
    }
  } catch (const std::exception& e) {
    res = HttpResponse();
    res.status = 500;
    res.body = std::string("{\"error\": \"internal error\"}");
  }
  if (handlers.on_response) handlers.on_response(request, res);
}

void Session::watch() {
  if (peer_shut_) return;
  if (buffer_.size() >= limits_.max_head_bytes + limits_.max_body_bytes)
    return;  // read on after the answer
  ++watch_ops_;
  socket_.async_read_some(buffer_.prepare(kReadChunk),
                          [self = shared_from_this()](const error_code& ec, size_t n) {
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

void Session::probe() {
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
                        self->socket_.async_wait(tcp::socket::wait_error,
                                                 [self](const error_code& wait_ec) {
                                                   --self->watch_ops_;
                                                   if (self->phase_ == Phase::kClosed) return;
                                                   if (!wait_ec) self->hang_up();
                                                   self->write_answer();
                                                 });
                      }
                      self->write_answer();
                    });
}

void Session::hang_up() {
  client_gone_ = true;
  head_hang_up_->hang_up();
}

void Session::on_answer(HttpResponse res) {
  if (phase_ == Phase::kClosed) return;
  answer_ = std::move(res);
  if (watch_ops_ > 0) {
    error_code ignored;
    socket_.cancel(ignored);  // the watch ends; the answer goes once it has
  }
  write_answer();
}

void Session::refuse(int status, std::string_view problem) {
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

void Session::write_answer() {
  if (!answer_ || watch_ops_ > 0 || phase_ != Phase::kHandling) return;
  if (client_gone_) return close();
  const bool closing = close_after_ || !keep_alive_ || server_.stopping;
  out_ = serialize(*answer_, head_only_, closing, keep_alive_ && http10_ && !closing);
  out_.erase(0, probe_sent_);
  phase_ = Phase::kWriting;
  arm(seconds_of(limits_.request_timeout_s), [this] { close(); });  // a client that does not read
  asio::async_write(socket_, asio::buffer(out_),
                    [self = shared_from_this(), closing](const error_code& ec, size_t) {
                      if (self->phase_ == Phase::kClosed) return;
                      self->disarm();
                      if (ec) return self->close();
                      if (closing) return self->linger();
                      self->next_request();
                    });
}

void Session::linger() {
  phase_ = Phase::kLingering;
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);
  arm(kLinger, [this] { close(); });
  drain();
}

void Session::drain() {
  socket_.async_read_some(asio::buffer(scratch_),
                          [self = shared_from_this()](const error_code& ec, size_t n) {
                            if (self->phase_ == Phase::kClosed) return;
                            self->drained_ += n;
                            if (ec || n == 0 || self->drained_ > kMaxLingerBytes)
                              return self->close();
                            self->drain();
                          });
}

void Session::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  disarm();
  error_code ignored;
  socket_.close(ignored);
  server_.forget(this, client_);
}

}  // namespace nmtzoo::http_layer
