// Whether the client of an HTTP request has hung up, so that a request still queued for decoding
// can be dropped. Written by hand because cpp-httplib 0.11.4 (Debian's) gives a handler no access
// to its connection; later versions have Request::is_connection_closed, which peeks the same way.
#pragma once

#include <string>

namespace nmtzoo {

class ConnectionWatch {
 public:
  // The connection whose ends are these addresses (as httplib::Request reports them).
  ConnectionWatch(std::string local_addr, int local_port, std::string remote_addr, int remote_port);

  // True once the peer has closed its end (end of stream or an error); false while it is open,
  // has sent more (a pipelined request), or when this process holds no such socket. The first
  // call finds the socket among the process's descriptors.
  bool peer_closed();

 private:
  std::string local_addr_;
  int local_port_;
  std::string remote_addr_;
  int remote_port_;
  bool searched_ = false;
  int fd_ = -1;
};

}  // namespace nmtzoo
