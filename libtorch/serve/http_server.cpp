// SPDX-License-Identifier: MIT
#include "libtorch/serve/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdint>

#include "libtorch/serve/http_session.h"

namespace nmtzoo {
namespace http_layer {

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

}  // namespace http_layer

using http_layer::error_code;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct HttpServer::Impl : http_layer::ServerCore {
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
    const size_t room =
        files.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(files.rlim_cur);
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
  if (!ec)
    acceptor.set_option(tcp::acceptor::reuse_address(true),
                        ec);  // not SO_REUSEPORT: a second server would share it
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
