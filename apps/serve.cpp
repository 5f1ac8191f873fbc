// SPDX-License-Identifier: MIT
// nmtzoo-serve: a translation server (LibreTranslate's API, nmtzoo's /v1 API, a web page) with
// dynamic batching, for a checkpoint or an ensemble (-c, as nmtzoo-translate), or several
// separately named models (--model NAME=CHECKPOINT[,CHECKPOINT...]).
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <signal.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <thread>

#include "apps/common.h"
#include "apps/translator_flags.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/translator.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/http_api.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"

namespace {

using namespace nmtzoo;

struct Options {
  TranslatorFlags model;  // -c ... served as one model
  std::string name;
  std::vector<std::string> models;  // NAME=A.pt[,B.pt...]
  std::string config;
  std::vector<std::string> overrides;
  std::string host;
  std::string port;
  std::string device = "cpu";
  int64_t threads = 0;
};

// A served model's name and checkpoints: -c's (named --name, or after the first file's stem), or
// one --model NAME=A.pt[,B.pt...] (equal weights, probabilities averaged).
struct ModelSpec {
  std::string name;
  std::vector<std::string> checkpoints;
  TranslatorOptions options;
};

std::vector<ModelSpec> model_specs(const Options& cli, const c10::Device& device) {
  std::vector<ModelSpec> specs;
  if (!cli.model.checkpoints.empty()) {
    const std::string stem = std::filesystem::path(cli.model.checkpoints.front()).stem().string();
    specs.push_back(
        {cli.name.empty() ? stem : cli.name, cli.model.checkpoints, cli.model.options(device)});
  }
  for (const auto& text : cli.models) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
      throw std::invalid_argument("--model " + text + ": expected NAME=CHECKPOINT[,CHECKPOINT...]");
    }
    ModelSpec spec{text.substr(0, equals), {}, TranslatorOptions().device(device)};
    for (size_t start = equals + 1; start <= text.size();) {
      const size_t comma = std::min(text.find(',', start), text.size());
      if (comma == start)
        throw std::invalid_argument("--model " + text + ": an empty checkpoint path");
      spec.checkpoints.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty())
    throw std::invalid_argument(
        "give a checkpoint (-c, repeat for an ensemble) or --model NAME=CHECKPOINT");
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (specs[j].name == specs[i].name) {
        throw std::invalid_argument("two models are named '" + specs[i].name +
                                    "': give each its own name");
      }
    }
  }
  return specs;
}

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
  std::vector<KeyValue> serve_values = parse_overrides(serve_sets);
  // --host and --port are spellings of their keys: the schema checks them (a port in 0..65535).
  if (!cli.host.empty()) serve_values.push_back({"serve.host", cli.host, "--host"});
  if (!cli.port.empty()) serve_values.push_back({"serve.port", cli.port, "--port"});
  apply_key_values(server, serve_values);
  configure_threads(cli.threads);
  const c10::Device device = resolve_device(parse_device_choice(cli.device), "--device");
  const std::vector<KeyValue> decoding_values = parse_overrides(decoding_sets);
  std::vector<ServedModel> models;
  for (auto& spec : model_specs(cli, device)) {
    ServedModel model;
    model.name = spec.name;
    model.translator = std::make_shared<Translator>(spec.checkpoints, spec.options);
    model.defaults = model.translator->search_options(decoding_values);
    model.translator->prepare(model.defaults);  // a shortlist that cannot be loaded stops it here
    std::string files;
    for (const auto& path : spec.checkpoints) files += (files.empty() ? "" : ", ") + path;
    std::cerr << fmt::format("model {}: {} ({}, {})\n", model.name, files, model.directions(),
                             model.arch());
    models.push_back(std::move(model));
  }

  // Several workers share the cores: each gets its part of --threads.
  const int64_t workers = server.serve.decode_workers;
  const int64_t threads_each =
      workers == 1 ? 0 : std::max<int64_t>(1, at::get_num_threads() / workers);
  DecodingQueue service(std::move(models),
                        std::chrono::duration<double, std::milli>(server.serve.max_wait_ms),
                        server.serve.max_queue, DecodeWorkers{workers, threads_each});
  HttpApi http(service, server);
  const int port = http.bind();
  std::thread stopper([&] {
    const int signal = wait_for_stop_signal();
    std::cerr << fmt::format("received {}: finishing the requests in flight\n",
                             signal == SIGTERM ? "SIGTERM" : "SIGINT");
    http.stop();
  });
  std::cerr << fmt::format(
                   "listening on http://{}:{}/ ({} HTTP threads, {} decoding worker(s), batches "
                   "wait at most {} ms)\n",
                   server.serve.host, port, server.serve.http_threads, workers,
                   server.serve.max_wait_ms)
            << std::flush;
  http.listen();
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(),
                 SIGTERM);  // listen() ended by itself: release the stopper
    stopper.join();
  }
  std::cerr << "stopped\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Serve trained nmtzoo models over HTTP: LibreTranslate's API (/translate, /languages, "
      "/detect), nmtzoo's (/v1/translate, /v1/models), /health, /metrics and a web page at /."};
  Options cli;
  add_translator_flags(app, cli.model);
  app.add_option("--name", cli.name,
                 "the -c model's name in /v1 requests (default: the first file's stem)");
  app.add_option(
         "--model", cli.models,
         "another model, served under its own name: NAME=CHECKPOINT, or NAME=A.pt,B.pt for an "
         "ensemble; repeat for several")
      ->type_name("NAME=CHECKPOINT[,...]");
  app.add_option("--config", cli.config, "a YAML file whose serve: section configures the server");
  app.add_option("--set", cli.overrides, "override serve.* or decoding.* keys")
      ->type_name("KEY=VALUE");
  app.add_option("--host", cli.host, "address to listen on (serve.host; default 127.0.0.1)");
  app.add_option("--port", cli.port, "TCP port (serve.port; default 8080; 0 = any free port)");
  app.add_option("--device", cli.device, "cpu | cuda | auto")->capture_default_str();
  app.add_option("--threads", cli.threads, "CPU threads for decoding; 0 = all cores")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return nmtzoo::run_app([&] { return run(cli); });
}
