// SPDX-License-Identifier: MIT
// A /health server on RESTinio 0.6.16 (Debian's librestinio-dev), configured as nmtzoo-serve's
// layer would be (connection limit, timeouts, body limit) and answering from a pool of handler
// threads as nmtzoo-serve does: one side of the HTTP-layer comparison in serve_connections.sh,
// not part of the build. Usage: restinio_health PORT
#include <restinio/all.hpp>

#include <string>

struct Traits : restinio::default_traits_t {
  static constexpr bool use_connection_count_limiter = true;
};

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  asio::thread_pool handlers(4);
  restinio::run(
      restinio::on_thread_pool<Traits>(1)
          .port(static_cast<std::uint16_t>(std::stoi(argv[1])))
          .address("127.0.0.1")
          .max_parallel_connections(10000)
          .read_next_http_message_timelimit(std::chrono::seconds(10))
          .write_http_response_timelimit(std::chrono::seconds(10))
          .handle_request_timeout(std::chrono::seconds(10))
          .incoming_http_msg_limits(restinio::incoming_http_msg_limits_t{}.max_body_size(1 << 20))
          .request_handler([&handlers](auto req) {
            if (req->header().path() != "/health") return restinio::request_rejected();
            asio::post(handlers, [req] {
              req->create_response()
                  .append_header(restinio::http_field::content_type, "application/json")
                  .set_body(R"({"status": "ok", "models": 1, "queued_sentences": 0})")
                  .done();
            });
            return restinio::request_accepted();
          }));
  handlers.join();
}
