// SPDX-License-Identifier: MIT
// The HTTP API's answers that are not translations, and a check of its texts: the model list,
// the Prometheus exposition, the message of each error status, target-language tags in text.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "libtorch/serve/http_server.h"
#include "libtorch/serve/metrics.h"
#include "torch_free/config/config.h"

namespace nmtzoo {

class DecodingQueue;
struct ServedModel;
struct ServiceStats;

// GET /v1/models: each model's name, directions, architecture and checkpoint file(s).
nlohmann::json models_json(const DecodingQueue& service);
// GET /metrics: the service's counters, the HTTP counters and the latency histogram.
std::string metrics_text(const ServiceStats& stats, int64_t requests, int64_t errors,
                         const Histogram& latency);
// What an error status means, for the answers without a message of their own.
std::string error_message(int status, const HttpRequest& req, const ServeConfig& serve,
                          const ConnectionLimits& limits);
// A target-language tag in the text would choose the target itself (control_tag_in): a
// RequestError naming field `field`, its item and line. `lines_of`: each item's count of `lines`.
void refuse_control_tags(const ServedModel& model, const std::vector<std::string>& lines,
                         const std::vector<size_t>& lines_of, const char* field);

}  // namespace nmtzoo
