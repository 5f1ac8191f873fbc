// SPDX-License-Identifier: MIT
// A HttpApi on a free loopback port serving one untrained tiny Transformer, "tiny"
// (src -> tgt, or another checkpoint of the run), for the server's tests (server_test.cpp,
// libretranslate_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "libtorch/search/translator.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/http_api.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {

class ServedTinyModel : public ::testing::Test {
 protected:
  // Serves the model (or `checkpoint`) with `serve_settings` (serve.* overrides) on top of a 50 ms
  // batching wait.
  void start(const std::vector<std::string>& serve_settings = {},
             const std::string& checkpoint = "") {
    checkpoint_ = checkpoint.empty() ? run_.save_untrained_checkpoint() : checkpoint;
    config_ = default_config();
    apply_overrides(config_, {"serve.port=0", "serve.max_wait_ms=50"});
    apply_overrides(config_, serve_settings);
    ServedModel model;
    model.name = "tiny";
    model.translator = std::make_shared<Translator>(std::vector<std::string>{checkpoint_});
    model.defaults = model.translator->search_options(decoding_settings());
    std::vector<ServedModel> models;
    models.push_back(std::move(model));
    service_ = std::make_unique<DecodingQueue>(
        std::move(models), std::chrono::duration<double, std::milli>(config_.serve.max_wait_ms),
        config_.serve.max_queue, DecodeWorkers{config_.serve.decode_workers, 0});
    server_ = std::make_unique<HttpApi>(*service_, config_);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->listen(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30, 0);
    return c;
  }
  // What nmtzoo-translate's Translator gives for `sentences` with the served model's options:
  // each sentence's `nbest` texts, one after the other.
  std::vector<std::string> offline(const std::vector<std::string>& sentences,
                                   int64_t nbest = 1) const {
    Translator translator({checkpoint_});
    SearchOptions options = translator.search_options(decoding_settings());
    options.nbest = nbest;
    options.beam = std::max(options.beam, nbest);
    std::vector<std::string> texts;
    for (const auto& t : translator.translate_batch(sentences, options)) {
      for (const auto& text : t.texts) texts.push_back(text);
    }
    return texts;
  }
  // decoding.* overrides of the served model's options (none by default).
  virtual std::vector<KeyValue> decoding_settings() const { return {}; }

  testing::TinyRun run_{"transformer"};
  std::string checkpoint_;
  RunConfig config_;
  std::unique_ptr<DecodingQueue> service_;
  std::unique_ptr<HttpApi> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace nmtzoo
