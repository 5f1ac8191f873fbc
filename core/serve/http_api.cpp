#include "core/serve/http_api.h"

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/config/schema.h"
#include "core/io/text_file.h"
#include "core/plot/svg.h"
#include "core/serve/connection_watch.h"
#include "core/serve/metrics.h"
#include "core/serve/translation_service.h"
#include "core/serve/web_page.h"

namespace nmtzoo {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A request the client got wrong: the status and what to tell it.
struct RequestError : std::runtime_error {
  int status;
  RequestError(int status_code, const std::string& message)
      : std::runtime_error(message), status(status_code) {}
};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The request's fields: a JSON object body, or form-encoded / query parameters (a repeated
// parameter becomes a list).
json request_fields(const httplib::Request& req) {
  const std::string type = req.get_header_value("Content-Type");
  if (type.rfind("application/json", 0) == 0) {
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::parse_error& e) {
      throw RequestError(400, std::string("malformed JSON body: ") + e.what());
    }
    if (!body.is_object()) throw RequestError(400, "the JSON body must be an object");
    return body;
  }
  json fields = json::object();
  for (const auto& [key, value] : req.params) {
    if (auto bad = find_invalid_utf8(value)) {
      throw RequestError(400, fmt::format("field '{}' is not valid UTF-8 (byte {})", key, *bad + 1));
    }
    if (!fields.contains(key)) {
      fields[key] = value;
    } else {
      if (!fields[key].is_array()) fields[key] = json::array({fields[key]});
      fields[key].push_back(value);
    }
  }
  return fields;
}

// `q` or `text`: a string or a list of strings.
std::vector<std::string> texts_of(const json& fields, const char* name) {
  if (!fields.contains(name)) throw RequestError(400, fmt::format("missing field '{}'", name));
  const json& value = fields[name];
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array()) throw RequestError(400, fmt::format("field '{}' must be a string or a list of strings", name));
  std::vector<std::string> texts;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      throw RequestError(400, fmt::format("field '{}' item {} must be a string", name, i + 1));
    }
    texts.push_back(value[i].get<std::string>());
  }
  return texts;
}

std::string string_field(const json& fields, const char* name, const std::string& fallback) {
  if (!fields.contains(name) || fields[name].is_null()) return fallback;
  if (!fields[name].is_string()) throw RequestError(400, fmt::format("field '{}' must be a string", name));
  return fields[name].get<std::string>();
}

// Every line of every text, checked against the limits; `lines_of[i]` counts text i's lines.
std::vector<std::string> split_lines(const std::vector<std::string>& texts, const ServeConfig& limits,
                                     const char* field, std::vector<size_t>& lines_of) {
  std::vector<std::string> lines;
  for (size_t t = 0; t < texts.size(); ++t) {
    size_t start = 0;
    size_t count = 0;
    const std::string& text = texts[t];
    while (true) {
      const size_t end = text.find('\n', start);
      std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (auto bad = find_text_problem(line)) {
        throw RequestError(400, fmt::format("field '{}' item {} line {}: {}", field, t + 1, count + 1,
                                            bad->describe()));
      }
      const auto chars = static_cast<int64_t>(std::count_if(
          line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
      if (chars > limits.max_line_chars) {
        throw RequestError(400, fmt::format("field '{}' item {} line {} has {} characters, over "
                                            "serve.max_line_chars ({})",
                                            field, t + 1, count + 1, chars, limits.max_line_chars));
      }
      lines.push_back(std::move(line));
      ++count;
      if (static_cast<int64_t>(lines.size()) > limits.max_lines) {
        throw RequestError(400, fmt::format("field '{}' holds more than serve.max_lines ({}) lines",
                                            field, limits.max_lines));
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
    lines_of.push_back(count);
  }
  return lines;
}

// The model's decoding options with the request's overrides, each checked as the config key
// decoding.<name> would be (same ranges, same messages).
TranslatorOptions decoding_options(const ServedModel& model, const json& fields) {
  static const char* const kKeys[] = {"beam", "nbest", "length_penalty", "alpha", "max_len_a",
                                      "max_len_b", "min_len", "sampling", "temperature", "top_k",
                                      "top_p", "seed", "unk_penalty", "coverage_penalty", "constraints"};
  RunConfig config = model.trained.config;
  for (const char* key : kKeys) {
    if (!fields.contains(key)) continue;
    const OptionSpec* option = find_option(std::string("decoding.") + key);
    const json& value = fields[key];
    if (value.is_object() || value.is_array()) throw RequestError(400, fmt::format("field '{}' must be a single value", key));
    std::string error;
    try {
      error = option->assign(YAML::Load(value.is_string() ? value.get<std::string>() : value.dump()), config);
    } catch (const YAML::Exception& e) {
      error = e.what();
    }
    if (!error.empty()) throw RequestError(400, fmt::format("field '{}': {}", key, error));
  }
  const DecodeConfig& d = config.decoding;
  if (!d.sampling && d.nbest > d.beam) {
    throw RequestError(400, fmt::format("field 'nbest' ({}) exceeds the beam ({})", d.nbest, d.beam));
  }
  if (d.sampling && d.constraints != ConstraintMode::kNone) {
    throw RequestError(400, "sampling cannot meet constraints: drop one of them");
  }
  return model.translator_options(d);
}

// The client hung up before its translations were ready.
struct ClientGone : std::runtime_error {
  ClientGone() : std::runtime_error("the client closed the connection") {}
};

}  // namespace

struct TranslationServer::Impl {
  TranslationService& service;
  const RunConfig& config;
  DisconnectWatcher disconnects{[this](uint64_t id) { service.withdraw(id); }};
  httplib::Server http;
  socket_t listen_socket = -1;
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> errors{0};
  std::mutex latency_mutex;
  Histogram latency{{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30}};

  Impl(TranslationService& s, const RunConfig& c) : service(s), config(c) {}

  // The request's translations, once decoded. A client that hangs up meanwhile has its request
  // dropped from the queue, unless its decoding has begun.
  std::vector<Translation> wait_for(PendingTranslation pending, const httplib::Request& req) {
    const auto watch = disconnects.watch({req.local_addr, req.local_port}, {req.remote_addr, req.remote_port}, pending.id);
    try {
      return pending.result.get();
    } catch (const Withdrawn&) {
      throw ClientGone();
    } catch (const std::invalid_argument& e) {
      throw RequestError(400, e.what());  // an unusable prefix or constraint
    }
  }

  void check_key(const json& fields) const {
    const auto& keys = config.serve.api_keys;
    if (keys.empty()) return;
    const std::string key = string_field(fields, "api_key", "");
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw RequestError(403, key.empty() ? "this server needs an api_key" : "invalid api_key");
    }
  }

  const ServedModel& model_for(const std::string& source, const std::string& target) const {
    std::string src = source;
    if (src == "auto") {
      const ServedModel* only = nullptr;
      for (const auto& m : service.models()) {
        if (m.tgt_lang() == target && only != nullptr && only->src_lang() != m.src_lang()) {
          throw RequestError(400, "source 'auto' is ambiguous: several source languages translate to '" + target + "'");
        }
        if (m.tgt_lang() == target) only = &m;
      }
      if (only != nullptr) src = only->src_lang();
    }
    if (const ServedModel* model = service.find(src, target)) return *model;
    std::string pairs;
    for (const auto& m : service.models()) pairs += (pairs.empty() ? "" : ", ") + m.src_lang() + "->" + m.tgt_lang();
    throw RequestError(400, fmt::format("no model translates '{}' to '{}' (this server has {})", source,
                                        target, pairs));
  }

  void libre_translate(const httplib::Request& req, httplib::Response& res) {
    const json fields = request_fields(req);
    check_key(fields);
    const std::vector<std::string> texts = texts_of(fields, "q");
    const std::string source = string_field(fields, "source", "auto");
    const std::string target = string_field(fields, "target", "");
    if (target.empty()) throw RequestError(400, "missing field 'target'");
    const std::string format = string_field(fields, "format", "text");
    if (format != "text") throw RequestError(400, "format '" + format + "' is not supported: send text");
    int64_t alternatives = 0;
    if (fields.contains("alternatives")) {
      const json& value = fields["alternatives"];
      try {
        alternatives = value.is_string() ? std::stoll(value.get<std::string>()) : value.get<int64_t>();
      } catch (const std::exception&) {
        throw RequestError(400, "field 'alternatives' must be an integer");
      }
      if (alternatives < 0 || alternatives > 16) throw RequestError(400, "field 'alternatives' must be in [0, 16]");
    }
    const ServedModel& model = model_for(source, target);
    TranslatorOptions options = model.translator_options(model.trained.config.decoding);
    options.search.nbest = alternatives + 1;
    options.search.beam = std::max(options.search.beam, options.search.nbest);
    std::vector<size_t> lines_of;
    const auto lines = split_lines(texts, config.serve, "q", lines_of);
    std::vector<TranslationRequest> sentences;
    for (const auto& line : lines) sentences.push_back({line, {}, {}});
    const auto translations = wait_for(service.submit(model, options, std::move(sentences)), req);
    json translated = json::array();
    json all_alternatives = json::array();
    size_t next = 0;
    for (size_t count : lines_of) {
      std::string text;
      std::vector<std::string> alternative_texts(static_cast<size_t>(alternatives));
      for (size_t i = 0; i < count; ++i, ++next) {
        const Translation& t = translations[next];
        text += (i ? "\n" : "") + (t.texts.empty() ? std::string() : t.texts[0]);
        for (size_t a = 0; a < alternative_texts.size(); ++a) {
          alternative_texts[a] += (i ? "\n" : "") + (a + 1 < t.texts.size() ? t.texts[a + 1] : std::string());
        }
      }
      translated.push_back(text);
      all_alternatives.push_back(alternative_texts);
    }
    const bool single = fields["q"].is_string();
    json body{{"translatedText", single ? translated[0] : translated}};
    if (alternatives > 0) body["alternatives"] = single ? all_alternatives[0] : all_alternatives;
    if (source == "auto") body["detectedLanguage"] = {{"confidence", 100.0}, {"language", model.src_lang()}};
    send_json(res, 200, body);
  }

  void nmtzoo_translate(const httplib::Request& req, httplib::Response& res) {
    const json fields = request_fields(req);
    const ServedModel* model = nullptr;
    if (fields.contains("model")) {
      const std::string name = string_field(fields, "model", "");
      model = service.find(name);
      if (model == nullptr) {
        std::string names;
        for (const auto& m : service.models()) names += (names.empty() ? "" : ", ") + m.name;
        throw RequestError(404, fmt::format("no model named '{}' (this server has {})", name, names));
      }
    } else if (fields.contains("source") || fields.contains("target")) {
      model = &model_for(string_field(fields, "source", "auto"), string_field(fields, "target", ""));
    } else {
      model = &service.models().front();
    }
    TranslatorOptions options = decoding_options(*model, fields);
    const bool want_tokens = fields.value("return_tokens", false);
    const bool want_attention = fields.value("return_attention", false);
    options.search.record_attention = want_attention;
    std::vector<size_t> lines_of;
    const auto lines = split_lines(texts_of(fields, "text"), config.serve, "text", lines_of);
    std::vector<TranslationRequest> sentences;
    for (const auto& line : lines) sentences.push_back({line, {}, {}});
    if (fields.contains("prefix")) {
      const auto prefixes = texts_of(fields, "prefix");
      if (prefixes.size() != sentences.size()) {
        throw RequestError(400, fmt::format("field 'prefix' has {} items for {} sentences", prefixes.size(), sentences.size()));
      }
      for (size_t i = 0; i < prefixes.size(); ++i) sentences[i].prefix = prefixes[i];
    }
    if (fields.contains("constraints")) {
      const json& all = fields["constraints"];
      if (!all.is_array() || all.size() != sentences.size()) {
        throw RequestError(400, "field 'constraints' must be a list with one list of phrases per sentence");
      }
      for (size_t i = 0; i < all.size(); ++i) {
        if (!all[i].is_array()) throw RequestError(400, fmt::format("field 'constraints' item {} must be a list of strings", i + 1));
        for (const auto& phrase : all[i]) {
          if (!phrase.is_string()) throw RequestError(400, fmt::format("field 'constraints' item {} must be a list of strings", i + 1));
          sentences[i].constraints.push_back(phrase.get<std::string>());
        }
      }
      if (options.search.constraints == ConstraintMode::kNone) options.search.constraints = ConstraintMode::kOrdered;
    }
    const auto translations = wait_for(service.submit(*model, options, std::move(sentences)), req);
    json out = json::array();
    const auto& tokenizer = *model->trained.tokenizers.tgt;
    for (const Translation& t : translations) {
      json nbest = json::array();
      for (size_t h = 0; h < t.nbest.size(); ++h) {
        const Hypothesis& hyp = t.nbest[h];
        json entry{{"text", t.texts[h]}, {"score", hyp.score}, {"log_prob", hyp.log_prob}};
        std::vector<std::string> pieces;
        for (int64_t id : hyp.tokens) pieces.push_back(tokenizer.piece(id));
        if (want_tokens) entry["tokens"] = pieces;
        if (want_attention && hyp.attention.defined()) {
          at::Tensor a = hyp.attention.to(torch::kCPU, torch::kFloat).contiguous();
          std::vector<std::vector<float>> rows(static_cast<size_t>(a.size(0)));
          for (int64_t r = 0; r < a.size(0); ++r) {
            rows[static_cast<size_t>(r)].assign(a[r].data_ptr<float>(), a[r].data_ptr<float>() + a.size(1));
          }
          pieces.push_back("</s>");
          entry["attention"] = rows;
          entry["attention_svg"] = heatmap_svg(rows, t.source_pieces, pieces, t.texts[h]);
        }
        nbest.push_back(entry);
      }
      out.push_back({{"text", t.texts.empty() ? "" : t.texts[0]}, {"nbest", nbest}, {"truncated", t.truncated}});
    }
    send_json(res, 200, {{"model", model->name}, {"translations", out}});
  }

  json models_json() const {
    json list = json::array();
    for (const auto& m : service.models()) {
      list.push_back({{"name", m.name}, {"source", m.src_lang()}, {"target", m.tgt_lang()},
                      {"arch", m.trained.config.model.arch}, {"checkpoint", m.checkpoint}});
    }
    return list;
  }

  std::string metrics_text() {
    const ServiceStats stats = service.stats();
    std::string text;
    text += metric_line("nmtzoo_requests_total", "counter", "HTTP requests answered", static_cast<double>(requests));
    text += metric_line("nmtzoo_request_errors_total", "counter", "HTTP requests answered with 4xx or 5xx", static_cast<double>(errors));
    text += metric_line("nmtzoo_sentences_total", "counter", "sentences decoded", static_cast<double>(stats.sentences));
    text += metric_line("nmtzoo_batches_total", "counter", "decoding batches", static_cast<double>(stats.batches));
    text += metric_line("nmtzoo_withdrawn_requests_total", "counter", "queued requests dropped because their client disconnected", static_cast<double>(stats.withdrawn_requests));
    text += metric_line("nmtzoo_withdrawn_sentences_total", "counter", "sentences of those requests", static_cast<double>(stats.withdrawn_sentences));
    text += metric_line("nmtzoo_queued_sentences", "gauge", "sentences waiting to be decoded", static_cast<double>(stats.queued_sentences));
    text += stats.batch_sentences.exposition("nmtzoo_batch_sentences", "sentences per decoding batch");
    text += stats.queue_wait_seconds.exposition("nmtzoo_queue_wait_seconds", "time a request waited in the queue");
    std::lock_guard<std::mutex> lock(latency_mutex);
    text += latency.exposition("nmtzoo_request_seconds", "time from a request's arrival to its answer");
    return text;
  }

  // Runs a handler, turning its errors into JSON answers, and counts it.
  template <class Handler>
  httplib::Server::Handler guarded(Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      const auto start = Clock::now();
      try {
        handler(req, res);
      } catch (const RequestError& e) {
        send_json(res, e.status, {{"error", e.what()}});
      } catch (const QueueFull& e) {
        send_json(res, 503, {{"error", e.what()}});
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

  void routes() {
    http.Post("/translate", guarded([this](const auto& req, auto& res) { libre_translate(req, res); }));
    http.Post("/v1/translate", guarded([this](const auto& req, auto& res) { nmtzoo_translate(req, res); }));
    http.Get("/languages", guarded([this](const httplib::Request&, httplib::Response& res) {
      json list = json::array();
      for (const auto& m : service.models()) {
        auto it = std::find_if(list.begin(), list.end(), [&](const json& l) { return l["code"] == m.src_lang(); });
        if (it == list.end()) {
          list.push_back({{"code", m.src_lang()}, {"name", m.src_lang()}, {"targets", json::array()}});
          it = list.end() - 1;
        }
        (*it)["targets"].push_back(m.tgt_lang());
      }
      send_json(res, 200, list);
    }));
    http.Post("/detect", guarded([this](const httplib::Request& req, httplib::Response& res) {
      check_key(request_fields(req));
      std::vector<std::string> sources;
      for (const auto& m : service.models()) {
        if (std::find(sources.begin(), sources.end(), m.src_lang()) == sources.end()) sources.push_back(m.src_lang());
      }
      if (sources.size() != 1) throw RequestError(501, "language detection is not available: the server's models read several languages");
      send_json(res, 200, json::array({{{"confidence", 100.0}, {"language", sources[0]}}}));
    }));
    http.Get("/v1/models", guarded([this](const httplib::Request&, httplib::Response& res) { send_json(res, 200, models_json()); }));
    http.Get("/health", guarded([this](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, {{"status", "ok"}, {"models", service.models().size()},
                           {"queued_sentences", service.stats().queued_sentences}});
    }));
    http.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_text(), "text/plain; version=0.0.4");
    }));
    http.Get("/", guarded([](const httplib::Request&, httplib::Response& res) {
      res.set_content(web_page_html(), "text/html; charset=utf-8");
    }));
    http.Options(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    http.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
      res.set_header("Access-Control-Allow-Origin", "*");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Content-Type");
    });
    // What httplib answers itself (no route, a body over the limit, a timeout) gets a JSON body too.
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string message = fmt::format("HTTP status {}", res.status);
      if (res.status == 404) message = "no endpoint " + req.method + " " + req.path;
      if (res.status == 400) message = "malformed HTTP request";
      if (res.status == 408) message = fmt::format("no request within serve.read_timeout_s ({} s)", config.serve.read_timeout_s);
      if (res.status == 413) message = fmt::format("the request body is over serve.max_body_bytes ({})", config.serve.max_body_bytes);
      send_json(res, res.status, {{"error", message}});
    });
  }
};

TranslationServer::TranslationServer(TranslationService& service, const RunConfig& config)
    : impl_(std::make_unique<Impl>(service, config)) {
  const ServeConfig& s = config.serve;
  const auto threads = static_cast<size_t>(s.http_threads);
  impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  const auto timeout = std::chrono::duration<double>(s.read_timeout_s);
  impl_->http.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  impl_->http.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  impl_->http.set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, s.read_timeout_s)));
  impl_->http.set_payload_max_length(static_cast<size_t>(s.max_body_bytes));
  // httplib closes a keep-alive connection after 5 requests by default: clients would reconnect
  // all the time under load.
  impl_->http.set_keep_alive_max_count(100000);
  // Remember the listening socket (httplib's default socket options are kept: SO_REUSEADDR).
  impl_->http.set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof yes);
    impl_->listen_socket = sock;
  });
  impl_->routes();
}

TranslationServer::~TranslationServer() = default;

int TranslationServer::bind() {
  const ServeConfig& s = impl_->config.serve;
  const int port = s.port == 0 ? impl_->http.bind_to_any_port(s.host)
                               : (impl_->http.bind_to_port(s.host, static_cast<int>(s.port)) ? static_cast<int>(s.port) : -1);
  if (port < 0) throw std::runtime_error(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine?)", s.host, s.port));
  // Debian's library listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when it was
  // built): 64 clients connecting at once saw resets. listen() again only raises the backlog.
  if (impl_->listen_socket >= 0) ::listen(impl_->listen_socket, SOMAXCONN);
  return port;
}

void TranslationServer::listen() { impl_->http.listen_after_bind(); }

void TranslationServer::stop() { impl_->http.stop(); }

}  // namespace nmtzoo
