// SPDX-License-Identifier: MIT
#include "libtorch/serve/http_api.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>

#include "libtorch/search/translation_json.h"
#include "libtorch/serve/api_answers.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/http_server.h"
#include "libtorch/serve/libretranslate.h"
#include "libtorch/serve/metrics.h"
#include "libtorch/serve/model_choice.h"
#include "libtorch/serve/request_fields.h"
#include "libtorch/serve/web_page.h"

namespace nmtzoo {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void send_json(HttpResponse& res, int status, const json& body) {
  res.status = status;
  res.content_type = "application/json";
  res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The request's fields: a JSON object body, or form-encoded / query parameters.
json request_fields(const HttpRequest& req) {
  return parse_request_fields(req.header("Content-Type"), req.body, req.params);
}

// The client hung up before its translations were ready.
struct ClientGone : std::runtime_error {
  ClientGone() : std::runtime_error("the client closed the connection") {}
};

// serve.read_timeout_s bounds a whole request (its head and body, from its first byte), its
// answer, and an idle connection; the bounds on connections are http_server.h's defaults.
ConnectionLimits connection_limits(const ServeConfig& s) {
  ConnectionLimits limits;
  limits.threads = static_cast<size_t>(s.http_threads);
  limits.request_timeout_s = limits.idle_timeout_s = s.read_timeout_s;
  limits.max_body_bytes = static_cast<size_t>(s.max_body_bytes);
  return limits;
}

}  // namespace

struct HttpApi::Impl {
  DecodingQueue& service;
  const RunConfig& config;
  HttpServer http{connection_limits(config.serve), handlers()};
  // Exact (method, path) routes; HEAD is answered as GET.
  std::map<std::pair<std::string, std::string>,
           std::function<void(const HttpRequest&, HttpResponse&)>>
      routes;
  const std::set<std::string> unread_posts{"/translate_file",
                                           "/suggest"};  // answered without reading their bodies
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> errors{0};
  std::mutex latency_mutex;
  Histogram latency{{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30}};

  Impl(DecodingQueue& s, const RunConfig& c) : service(s), config(c) {}

  // The request's translations, once decoded. A client that hangs up meanwhile has its request
  // dropped from the queue, unless its decoding has begun.
  std::vector<Translation> wait_for(const HttpRequest& req, PendingTranslation pending) {
    const auto watch = req.hang_up->watch([this, id = pending.id] { service.withdraw(id); });
    try {
      return pending.result.get();
    } catch (const Withdrawn&) {
      throw ClientGone();
    } catch (const std::invalid_argument& e) {
      throw RequestError(400, e.what());  // an unusable prefix or constraint
    }
  }

  // As LibreTranslate: a missing key is the request's mistake (400), a wrong one is refused (403).
  void check_key(const json& fields) const {
    const auto& keys = config.serve.api_keys;
    if (keys.empty()) return;
    const std::string key = string_field(fields, "api_key", "");
    if (key.empty())
      throw RequestError(400, "missing field 'api_key': this server needs an API key");
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw RequestError(403, "field 'api_key': invalid API key");
  }

  // One request a line, each asking for `target` ("" = the model's default).
  static std::vector<TranslationRequest> requests_of(const std::vector<std::string>& lines,
                                                     const std::string& target) {
    std::vector<TranslationRequest> sentences;
    for (const auto& line : lines) sentences.push_back({line, {}, {}, target});
    return sentences;
  }

  void libre_translate(const HttpRequest& req, HttpResponse& res) {
    const json fields = request_fields(req);
    check_key(fields);
    const std::vector<std::string> texts = texts_of(fields, "q");
    const std::string source = string_field(fields, "source", "auto");
    const std::string target = string_field(fields, "target", "");
    if (target.empty()) throw RequestError(400, "missing field 'target'");
    const std::string format = string_field(fields, "format", "text");
    if (format != "text")
      throw RequestError(400, "format '" + format + "' is not supported: send text");
    const int64_t alternatives = alternatives_field(fields, config.serve.max_alternatives);
    const auto [model, src] = model_for_languages(service, source, target);
    SearchOptions options = model.defaults;
    options.nbest = alternatives + 1;
    options.beam = std::max(options.beam, options.nbest);
    std::vector<size_t> lines_of;
    const auto lines = split_lines(texts, config.serve, "q", lines_of);
    refuse_control_tags(model, lines, lines_of, "q");
    const auto translations =
        wait_for(req, service.submit(model, options, requests_of(lines, target)));
    const json body = libretranslate_answer(fields, lines_of, translations, alternatives, src);
    send_json(res, 200, body);
  }

  void nmtzoo_translate(const HttpRequest& req, HttpResponse& res) {
    const json fields = request_fields(req);
    check_key(fields);
    const ServedModel* model = nullptr;
    if (fields.contains("model")) {
      model = &model_named(service, string_field(fields, "model", ""));
    } else if (fields.contains("source") || fields.contains("target")) {
      model = &model_for_languages(service, string_field(fields, "source", "auto"),
                                   string_field(fields, "target", ""))
                   .first;
    } else {
      model = &service.models().front();
    }
    check_field_names(fields, {"model", "source", "target", "text", "prefix", "constraints",
                               "return_tokens", "return_attention", "api_key"});
    SearchOptions options = decoding_options(*model, fields);
    const bool want_tokens = bool_field(fields, "return_tokens", false);
    const bool want_attention = bool_field(fields, "return_attention", false);
    options.record_attention = want_attention;
    std::vector<size_t> lines_of;
    const auto lines = split_lines(texts_of(fields, "text"), config.serve, "text", lines_of);
    refuse_control_tags(*model, lines, lines_of, "text");
    std::vector<TranslationRequest> sentences =
        requests_of(lines, string_field(fields, "target", ""));
    add_prefixes_and_constraints(fields, sentences, options);
    const auto translations = wait_for(req, service.submit(*model, options, std::move(sentences)));
    const TranslationJsonOptions shape{
        true, want_tokens, want_attention ? AlignmentOutput::kSoft : AlignmentOutput::kNone,
        want_attention};
    json out = json::array();
    for (const Translation& t : translations) {
      out.push_back(translation_json(t, *model->translator->tokenizers().tgt, shape));
    }
    send_json(res, 200, {{"model", model->name}, {"translations", out}});
  }

  // Runs a handler, turning its errors into JSON answers, and counts it.
  template <class Handler>
  std::function<void(const HttpRequest&, HttpResponse&)> guarded(Handler handler) {
    return [this, handler](const HttpRequest& req, HttpResponse& res) {
      const auto start = Clock::now();
      try {
        handler(req, res);
      } catch (const RequestError& e) {
        send_json(res, e.status, {{"error", e.what()}});
      } catch (const QueueFull& e) {
        send_json(res, 503, {{"error", e.what()}});
      } catch (const nlohmann::json::type_error& e) {  // a field of the wrong JSON type
        send_json(res, 400, {{"error", std::string("a field has the wrong type: ") + e.what()}});
      } catch (const ClientGone& e) {
        send_json(res, 499, {{"error", e.what()}});  // nginx's status for this; nobody reads it
      } catch (const std::exception& e) {
        send_json(res, 500, {{"error", std::string("internal error: ") + e.what()}});
      }
      ++requests;
      if (res.status >= 400 && res.status != 499) ++errors;
      std::lock_guard<std::mutex> lock(latency_mutex);
      latency.observe(std::chrono::duration<double>(Clock::now() - start).count());
    };
  }

  // The routes whose body is read: any other POST is answered without reading it (a file upload
  // to a disabled endpoint), and its connection closed.
  bool reads_body(const HttpRequest& head) const {
    return head.method == "POST" && routes.count({"POST", head.path}) != 0 &&
           unread_posts.count(head.path) == 0;
  }

  void handle(const HttpRequest& req, HttpResponse& res) {
    if (req.method == "OPTIONS") {
      res.status = 204;
      return;
    }
    const auto route = routes.find({req.method == "HEAD" ? "GET" : req.method, req.path});
    if (route != routes.end()) return route->second(req, res);
    guarded([this](const HttpRequest& r, HttpResponse&) {
      if (r.method != "POST" && r.path.rfind("/download_file/", 0) == 0) {
        throw RequestError(400, "Files translation are disabled on this server.");
      }
      throw RequestError(404, error_message(404, r, config.serve, http.limits()));
    })(req, res);
  }

  HttpHandlers handlers() {
    HttpHandlers h;
    h.handle = [this](const HttpRequest& req, HttpResponse& res) { handle(req, res); };
    h.reads_body = [this](const HttpRequest& head) { return reads_body(head); };
    h.refuse = [this](const HttpRequest& head, std::string_view problem, HttpResponse& res) {
      const std::string message = problem.empty()
                                      ? error_message(res.status, head, config.serve, http.limits())
                                      : std::string(problem);
      res.body = "{\"error\": " + json(message).dump() +
                 "}";  // as the answers of earlier versions of this layer
    };
    h.on_response = [](const HttpRequest&, HttpResponse& res) {
      res.set_header("Access-Control-Allow-Origin", "*");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
    };
    return h;
  }

  template <class Handler>
  void get(const char* path, Handler handler) {
    routes[{"GET", path}] = guarded(handler);
  }
  template <class Handler>
  void post(const char* path, Handler handler) {
    routes[{"POST", path}] = guarded(handler);
  }

  void add_routes() {
    post("/translate", [this](const auto& req, auto& res) { libre_translate(req, res); });
    post("/v1/translate", [this](const auto& req, auto& res) { nmtzoo_translate(req, res); });
    get("/languages", [this](const HttpRequest&, HttpResponse& res) {
      std::vector<std::pair<std::string, std::string>> pairs;
      for (const auto& m : service.models()) {
        for (const auto& pair : m.pairs()) pairs.emplace_back(pair.src, pair.tgt);
      }
      send_json(res, 200, libretranslate_languages(pairs));
    });
    get("/frontend/settings", [this](const HttpRequest&, HttpResponse& res) {
      const LanguagePair first = service.models().front().pairs().front();
      send_json(res, 200, libretranslate_settings(config.serve, first.src, first.tgt));
    });
    post("/detect", [this](const HttpRequest& req, HttpResponse& res) {
      const json fields = request_fields(req);
      check_key(fields);
      texts_of(fields,
               "q");  // required, as by LibreTranslate, though the answer does not depend on it
      const std::vector<std::string> sources = source_languages(service);
      if (sources.size() != 1)
        throw RequestError(
            501, "language detection is not available: the server's models read several languages");
      send_json(res, 200, json::array({{{"confidence", 100.0}, {"language", sources[0]}}}));
    });
    // It names the checkpoints' files: on a keyed server, for key holders only (?api_key=).
    get("/v1/models", [this](const HttpRequest& req, HttpResponse& res) {
      check_key(request_fields(req));
      send_json(res, 200, models_json(service));
    });
    get("/health", [this](const HttpRequest&, HttpResponse& res) {
      send_json(res, 200,
                {{"status", "ok"},
                 {"models", service.models().size()},
                 {"queued_sentences", service.stats().queued_sentences}});
    });
    get("/metrics", [this](const HttpRequest&, HttpResponse& res) {
      res.content_type = "text/plain; version=0.0.4";
      std::lock_guard<std::mutex> lock(latency_mutex);
      res.body = metrics_text(service.stats(), requests, errors, latency);
    });
    get("/", [](const HttpRequest&, HttpResponse& res) {
      res.content_type = "text/html; charset=utf-8";
      res.body = web_page_html();
    });
    // What LibreTranslate answers when files translation and suggestions are disabled (their
    // bodies are not read: reads_body).
    routes[{"POST", "/translate_file"}] = guarded([](const HttpRequest&, HttpResponse&) {
      throw RequestError(403, "Files translation are disabled on this server.");
    });
    routes[{"POST", "/suggest"}] = guarded([](const HttpRequest&, HttpResponse&) {
      throw RequestError(403, "Suggestions are disabled on this server.");
    });
  }
};

HttpApi::HttpApi(DecodingQueue& service, const RunConfig& config)
    : impl_(std::make_unique<Impl>(service, config)) {
  impl_->add_routes();
}

HttpApi::~HttpApi() = default;

int HttpApi::bind() {
  const ServeConfig& s = impl_->config.serve;
  const int port = impl_->http.bind(s.host, static_cast<int>(s.port));
  if (port < 0)
    throw std::runtime_error(fmt::format(
        "cannot listen on {}:{} (in use, or not an address of this machine?)", s.host, s.port));
  return port;
}

void HttpApi::listen() { impl_->http.run(); }

void HttpApi::stop() { impl_->http.stop(); }

}  // namespace nmtzoo
