// nmtzoo-serve: a translation server (LibreTranslate's API, nmtzoo's /v1 API, a web page) with
// dynamic batching, for one or several trained checkpoints.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "apps/common.h"
#include "core/config/loader.h"
#include "core/runtime/runtime.h"
#include "core/runtime/trained_model.h"
#include "core/serve/http_api.h"
#include "core/search/shortlist.h"
#include "core/serve/translation_service.h"
#include "models/registry.h"

namespace {

using namespace nmtzoo;

struct Options {
  std::vector<std::string> checkpoints;
  std::vector<std::string> names;
  std::string config;
  std::vector<std::string> overrides;
  std::string host;
  int64_t port = -1;
  std::string device = "cpu";
  int64_t threads = 0;
};

int run(const Options& cli) {
  // SIGTERM and SIGINT go to one thread, which stops the server; the main thread then finishes
  // the requests in flight and the queue before it exits 0. Blocked first, so that every thread
  // started later (LibTorch's and OpenMP's too) inherits the mask.
  block_stop_signals();
  register_builtin_models();
  // The serve: section (and nothing else) comes from --config, then --set serve.*, --host, --port.
  RunConfig server = cli.config.empty() ? default_config() : load_config(cli.config);
  std::vector<std::string> serve_sets;
  std::vector<std::string> decoding_sets;
  for (const auto& set : cli.overrides) {
    if (set.rfind("serve.", 0) == 0) {
      serve_sets.push_back(set);
    } else if (set.rfind("decoding.", 0) == 0) {
      decoding_sets.push_back(set);
    } else {
      throw std::runtime_error("--set " + set + ": nmtzoo-serve takes serve.* and decoding.* keys");
    }
  }
  apply_overrides(server, serve_sets);
  if (!cli.host.empty()) server.serve.host = cli.host;
  if (cli.port >= 0) server.serve.port = cli.port;
  if (!cli.names.empty() && cli.names.size() != cli.checkpoints.size()) {
    throw std::runtime_error(fmt::format("--name given {} times for {} checkpoints", cli.names.size(),
                                         cli.checkpoints.size()));
  }
  configure_threads(cli.threads);
  const c10::Device device = resolve_device(parse_device_choice(cli.device), "--device");
  std::vector<ServedModel> models;
  for (size_t i = 0; i < cli.checkpoints.size(); ++i) {
    ServedModel model;
    model.checkpoint = cli.checkpoints[i];
    model.name = cli.names.empty() ? std::filesystem::path(model.checkpoint).stem().string() : cli.names[i];
    for (const auto& other : models) {
      if (other.name == model.name) throw std::runtime_error("two models are named '" + model.name + "': give --name");
    }
    model.trained = load_trained_model(model.checkpoint, device);
    apply_overrides(model.trained.config, decoding_sets);
    if (const std::string& path = model.trained.config.decoding.shortlist; !path.empty()) {
      model.shortlist = std::make_shared<const Shortlist>(Shortlist::load(path, model.trained.tokenizers));
    }
    std::cerr << fmt::format("model {}: {} ({} -> {}, {})\n", model.name, model.checkpoint,
                             model.src_lang(), model.tgt_lang(), model.trained.config.model.arch);
    models.push_back(std::move(model));
  }

  TranslationService service(std::move(models), device,
                             std::chrono::duration<double, std::milli>(server.serve.max_wait_ms),
                             server.serve.max_queue);
  TranslationServer http(service, server);
  const int port = http.bind();
  std::thread stopper([&] {
    const int signal = wait_for_stop_signal();
    std::cerr << fmt::format("received {}: finishing the requests in flight\n", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    http.stop();
  });
  std::cerr << fmt::format("listening on http://{}:{}/ ({} HTTP threads, batches wait at most {} ms)\n",
                           server.serve.host, port, server.serve.http_threads, server.serve.max_wait_ms)
            << std::flush;
  http.listen();
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(), SIGTERM);  // listen() ended by itself: release the stopper
    stopper.join();
  }
  std::cerr << "stopped\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Serve trained nmtzoo models over HTTP: LibreTranslate's API (/translate, /languages, "
               "/detect), nmtzoo's (/v1/translate, /v1/models), /health, /metrics and a web page at /."};
  Options cli;
  app.add_option("-c,--checkpoint", cli.checkpoints, "a trained checkpoint; repeat for several models")
      ->required();
  app.add_option("--name", cli.names, "each model's name in /v1 requests (default: the file's stem)");
  app.add_option("--config", cli.config, "a YAML file whose serve: section configures the server");
  app.add_option("--set", cli.overrides, "override serve.* or decoding.* keys")->type_name("KEY=VALUE");
  app.add_option("--host", cli.host, "address to listen on (serve.host; default 127.0.0.1)");
  app.add_option("--port", cli.port, "TCP port (serve.port; default 8080; 0 = any free port)");
  app.add_option("--device", cli.device, "cpu | cuda | auto")->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads for decoding; 0 = all cores")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(cli); });
}
