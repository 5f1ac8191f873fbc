// One connection of nmtzoo-serve's HTTP server (http_server.h): what was read ahead of its
// requests, where it stands, and the httplib::Stream that a request is read and answered through.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

namespace nmtzoo {

struct Connection {
  using Clock = std::chrono::steady_clock;
  enum class State { kIdle, kHead, kDraining };  // no request yet; one under way; closing
  int fd = -1;
  std::string client;  // the peer's address
  std::string in;      // bytes received, consumed up to `used`
  size_t used = 0;
  State state = State::kIdle;
  Clock::time_point start;     // the current request's first byte
  Clock::time_point deadline;  // of the state, while the reader thread watches the connection
  size_t drained = 0;          // bytes discarded while closing
  // The request an HTTP thread is handling:
  bool parsed = false;     // httplib parsed its head (its pre-routing handler ran)
  bool body_read = false;  // its body was read whole
  bool close = false;      // close the connection after the answer
  bool timed_out = false;  // a read passed the deadline
  Clock::time_point answer_deadline;  // once the answer's head is ready: all of it written by then

  // Whether a whole request head (request line and headers) is read ahead.
  bool head_complete() const { return in.find("\r\n\r\n", used) != std::string::npos; }
  // For the reader thread: reads what the socket holds, without waiting, while `in` is under
  // `max_head` bytes; a request's first byte starts its deadline. False once the client has closed
  // its end (or the connection failed).
  bool read_available(size_t max_head, Clock::duration request_timeout);
  // While closing: discards what the socket holds. False once done (the client closed its end, or
  // `max` bytes were discarded).
  bool drain(size_t max);
};

// The connection whose request this thread is handling, or null.
// A function rather than an extern thread_local: GCC's UBSan flagged loads through the extern
// variable's TLS wrapper as null (a false report, and every server test failed under
// scripts/sanitize.sh); a function-local thread_local has no wrapper.
Connection*& current_connection();

// Milliseconds from now to `t` (0 when past), for poll and epoll_wait.
int millis_until(Connection::Clock::time_point t);
// Waits until `fd` is ready for `events` (POLLIN, POLLOUT), up to `deadline`.
bool wait_until_ready(int fd, short events, Connection::Clock::time_point deadline);
// Sends a small answer of the connection layer itself (JSON {"error": message}) without waiting.
void send_own_answer(int fd, int status, const char* reason, const std::string& message);
// One end of a socket as numeric host and port; `ip` unchanged when it has none.
void socket_endpoint(int fd, bool peer, std::string& ip, int& port);
// A number of seconds as people write it (0.5, 10).
std::string seconds_text(double seconds);
// The fields of an application/x-www-form-urlencoded body, added to `params`.
void parse_form(const std::string& body, httplib::Params& params);
// HttpServer::read_body, with the bound `max` (bytes after decompression).
int read_request_body(httplib::Request& req, const httplib::ContentReader& reader, size_t max);

// What httplib reads a request through: the connection's read-ahead, then the socket, up to the
// request's deadline; its answer is written by the connection's answer_deadline (anything written
// before the answer, such as 100 Continue, within `write_timeout_s`).
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(Connection& c, Connection::Clock::time_point read_deadline, double write_timeout_s);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override { socket_endpoint(c_.fd, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { socket_endpoint(c_.fd, false, ip, port); }
  socket_t socket() const override { return c_.fd; }

 private:
  Connection::Clock::time_point write_deadline() const;

  Connection& c_;
  Connection::Clock::time_point read_deadline_;
  Connection::Clock::duration write_timeout_;
};

}  // namespace nmtzoo
