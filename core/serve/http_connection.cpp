#include "core/serve/http_connection.h"

#include <netdb.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nmtzoo {
namespace {

using Clock = Connection::Clock;

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::string form_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

Connection*& current_connection() {
  thread_local Connection* connection = nullptr;
  return connection;
}

bool Connection::read_available(size_t max_head, Clock::duration request_timeout) {
  in.erase(0, used);
  used = 0;
  char buffer[16384];
  while (in.size() < max_head) {
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, max_head - in.size()), MSG_DONTWAIT);
    if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
    if (in.empty()) {  // a request begins: its deadline runs from now
      state = State::kHead;
      start = Clock::now();
      deadline = start + request_timeout;
    }
    in.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

bool Connection::drain(size_t max) {
  char buffer[16384];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n > 0) drained += static_cast<size_t>(n);
  return n > 0 ? drained <= max : n < 0 && (errno == EAGAIN || errno == EINTR);
}

int millis_until(Clock::time_point t) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
}

bool wait_until_ready(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, millis_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

void send_own_answer(int fd, int status, const char* reason, const std::string& message) {
  const std::string body = "{\"error\": \"" + message + "\"}";
  const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\nAccess-Control-Allow-Origin: *\r\n\r\n" + body;
  (void)::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void socket_endpoint(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, raw, &length) : ::getsockname(fd, raw, &length)) != 0) return;
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (::getnameinfo(raw, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

void parse_form(const std::string& body, httplib::Params& params) {
  for (size_t start = 0; start <= body.size();) {
    const size_t end = std::min(body.find('&', start), body.size());
    const std::string pair = body.substr(start, end - start);
    const size_t equals = std::min(pair.find('='), pair.size());
    if (equals > 0) {
      params.emplace(form_decode(pair.substr(0, equals)), form_decode(pair.substr(std::min(equals + 1, pair.size()))));
    }
    start = end + 1;
  }
}

int read_request_body(httplib::Request& req, const httplib::ContentReader& reader, size_t max) {
  if (req.is_multipart_form_data()) return 415;
  // httplib decodes these (Debian builds it with zlib and brotli); any other coding would reach
  // the handlers still encoded, as if it were the body.
  const std::string content_coding = req.get_header_value("Content-Encoding");
  if (!content_coding.empty() && ::strcasecmp(content_coding.c_str(), "identity") != 0 &&
      ::strcasecmp(content_coding.c_str(), "gzip") != 0 && ::strcasecmp(content_coding.c_str(), "deflate") != 0 &&
      ::strcasecmp(content_coding.c_str(), "br") != 0) {
    return 415;
  }
  const std::string coding = req.get_header_value("Transfer-Encoding");
  if (req.has_header("Transfer-Encoding") && ::strcasecmp(coding.c_str(), "chunked") != 0) return 501;
  if (!req.has_header("Transfer-Encoding") && req.has_header("Content-Length")) {
    const std::string length = req.get_header_value("Content-Length");
    char* end = nullptr;
    errno = 0;
    const unsigned long long declared = std::strtoull(length.c_str(), &end, 10);
    if (length.empty() || *end != '\0' || errno != 0 || length[0] == '-') return 400;
    if (declared > max) return 413;  // refused before a byte of it is read
  }
  // Without either header a request has no body (RFC 9112 6.3), though httplib would read on to
  // the end of the connection.
  if (req.has_header("Transfer-Encoding") || req.has_header("Content-Length")) {
    bool over = false;
    const bool read = reader([&](const char* data, size_t size) {
      over = size > max - req.body.size();  // counted as decoded: a compressed body is bounded too
      if (!over) req.body.append(data, size);
      return !over;
    });
    if (over) return 413;
    if (!read) return current_connection() != nullptr && current_connection()->timed_out ? 408 : 400;
  }
  if (current_connection() != nullptr) current_connection()->body_read = true;
  if (req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0) parse_form(req.body, req.params);
  return 0;
}

ConnectionStream::ConnectionStream(Connection& c, Clock::time_point read_deadline, double write_timeout_s)
    : c_(c),
      read_deadline_(read_deadline),
      write_timeout_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(write_timeout_s))) {}

bool ConnectionStream::is_readable() const {
  return c_.used < c_.in.size() || wait_until_ready(c_.fd, POLLIN, read_deadline_);
}

bool ConnectionStream::is_writable() const { return wait_until_ready(c_.fd, POLLOUT, write_deadline()); }

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (c_.used == c_.in.size()) {  // nothing read ahead: wait for the socket, up to the deadline
    c_.in.clear();
    c_.used = 0;
    char buffer[16384];
    while (true) {
      // Past the deadline, what already waits in the socket is still read (poll with no wait): a
      // client that sent its whole request in time is not cut because a worker reached it late.
      if (!wait_until_ready(c_.fd, POLLIN, read_deadline_)) {
        c_.timed_out = true;
        return -1;
      }
      const ssize_t n = ::recv(c_.fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        c_.in.assign(buffer, static_cast<size_t>(n));  // may hold the next requests: they stay
        break;
      }
      if (n == 0) return 0;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
  }
  const size_t n = std::min(size, c_.in.size() - c_.used);
  std::memcpy(ptr, c_.in.data() + c_.used, n);
  c_.used += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  while (true) {
    if (!wait_until_ready(c_.fd, POLLOUT, write_deadline())) return -1;
    const ssize_t n = ::send(c_.fd, ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
  }
}

Clock::time_point ConnectionStream::write_deadline() const {
  return c_.answer_deadline != Clock::time_point{} ? c_.answer_deadline : Clock::now() + write_timeout_;
}

}  // namespace nmtzoo
