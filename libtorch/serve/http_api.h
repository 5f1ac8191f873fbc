// SPDX-License-Identifier: MIT
// The API of nmtzoo-serve: its routes, over HttpServer (http_server.h, Boost.Beast), in front of
// the DecodingQueue (decoding_queue.h). LibreTranslate's API (POST /translate, GET /languages,
// POST /detect) so its clients work unchanged, nmtzoo's own POST /v1/translate with per-request
// decoding options, GET /v1/models, GET /health and GET /metrics (Prometheus). Every error is a
// JSON {"error": "..."} naming the field at fault.
#pragma once

#include <memory>
#include <string>

#include "torch_free/config/config.h"

namespace nmtzoo {

class DecodingQueue;

class HttpApi {
 public:
  // `config.serve` gives the address, limits and keys; the service does the decoding.
  HttpApi(DecodingQueue& service, const RunConfig& config);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds serve.host:serve.port (0: a free port) and returns the port; throws on failure.
  int bind();
  // Serves until stop(): requests in flight are finished first.
  void listen();
  // Stops accepting; safe from any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmtzoo
