// SPDX-License-Identifier: MIT
#include "libtorch/serve/api_answers.h"

#include <fmt/format.h>

#include "libtorch/search/translation_pipeline.h"
#include "libtorch/serve/decoding_queue.h"
#include "libtorch/serve/request_fields.h"

namespace nmtzoo {

using nlohmann::json;

json models_json(const DecodingQueue& service) {
  json list = json::array();
  for (const auto& m : service.models()) {
    const auto& paths = m.translator->paths();
    json directions = json::array();
    for (const auto& pair : m.pairs())
      directions.push_back({{"source", pair.src}, {"target", pair.tgt}});
    json entry{{"name", m.name},
               {"directions", directions},
               {"arch", m.arch()},
               {"checkpoint", paths.front()}};
    if (directions.size() == 1)
      entry["source"] = directions[0]["source"], entry["target"] = directions[0]["target"];
    if (paths.size() > 1) entry["checkpoints"] = paths;
    list.push_back(std::move(entry));
  }
  return list;
}

std::string metrics_text(const ServiceStats& stats, int64_t requests, int64_t errors,
                         const Histogram& latency) {
  std::string text;
  text += metric_line("nmtzoo_requests_total", "counter", "HTTP requests answered",
                      static_cast<double>(requests));
  text += metric_line("nmtzoo_request_errors_total", "counter",
                      "HTTP requests answered with 4xx or 5xx", static_cast<double>(errors));
  text += metric_line("nmtzoo_sentences_total", "counter", "sentences decoded",
                      static_cast<double>(stats.sentences));
  text += metric_line("nmtzoo_batches_total", "counter", "decoding batches",
                      static_cast<double>(stats.batches));
  text += metric_line("nmtzoo_withdrawn_requests_total", "counter",
                      "queued requests dropped because their client disconnected",
                      static_cast<double>(stats.withdrawn_requests));
  text += metric_line("nmtzoo_withdrawn_sentences_total", "counter", "sentences of those requests",
                      static_cast<double>(stats.withdrawn_sentences));
  text += metric_line("nmtzoo_queued_sentences", "gauge", "sentences waiting to be decoded",
                      static_cast<double>(stats.queued_sentences));
  text +=
      stats.batch_sentences.exposition("nmtzoo_batch_sentences", "sentences per decoding batch");
  text += stats.queue_wait_seconds.exposition("nmtzoo_queue_wait_seconds",
                                              "time a request waited in the queue");
  text +=
      latency.exposition("nmtzoo_request_seconds", "time from a request's arrival to its answer");
  return text;
}

std::string error_message(int status, const HttpRequest& req, const ServeConfig& serve,
                          const ConnectionLimits& limits) {
  switch (status) {
    case 400:
      return "malformed HTTP request";
    case 404:
      return "no endpoint " + req.method + " " + req.path;
    case 405:
      return "method " + req.method + " is not allowed: use GET, POST or OPTIONS";
    case 408:
      return fmt::format("the request did not arrive whole within serve.read_timeout_s ({} s)",
                         serve.read_timeout_s);
    case 413:
      return fmt::format("the request body is over serve.max_body_bytes ({})",
                         serve.max_body_bytes);
    case 415:
      return req.header("Content-Type").rfind("multipart/form-data", 0) == 0
                 ? "a multipart body is not supported: send JSON or form-encoded fields"
                 : "Content-Encoding '" + req.header("Content-Encoding") +
                       "' is not supported: send gzip, deflate, br or none";
    case 431:
      return fmt::format("the request line and headers are over {} bytes", limits.max_head_bytes);
    case 501:
      return "Transfer-Encoding '" + req.header("Transfer-Encoding") +
             "' is not supported: send chunked or a Content-Length";
    default:
      return fmt::format("HTTP status {}", status);
  }
}

void refuse_control_tags(const ServedModel& model, const std::vector<std::string>& lines,
                         const std::vector<size_t>& lines_of, const char* field) {
  size_t next = 0;
  for (size_t item = 0; item < lines_of.size(); ++item) {
    for (size_t line = 0; line < lines_of[item]; ++line, ++next) {
      const std::string tag = control_tag_in(model.translator->tokenizers(), lines[next]);
      if (tag.empty()) continue;
      throw RequestError(
          400, fmt::format("field '{}' item {} line {} holds {}, the model's target-language tag: "
                           "the target comes from field 'target' only",
                           field, item + 1, line + 1, tag));
    }
  }
}

}  // namespace nmtzoo
