// SPDX-License-Identifier: MIT
#include "libtorch/serve/model_choice.h"

#include <fmt/format.h>

#include <algorithm>

#include "libtorch/serve/request_fields.h"

namespace nmtzoo {

std::pair<const ServedModel&, std::string> model_for_languages(const DecodingQueue& service,
                                                               const std::string& source,
                                                               const std::string& target) {
  std::string src = source;
  if (src == "auto" && !target.empty()) {  // no target: no source translates into it
    const std::vector<std::string> sources = source_languages(service, target);
    if (sources.size() > 1) {
      throw RequestError(
          400,
          "source 'auto' is ambiguous: several source languages translate to '" + target + "'");
    }
    if (sources.size() == 1) src = sources.front();
  }
  if (const ServedModel* model = service.find(src, target)) return {*model, src};
  std::string pairs;
  for (const auto& m : service.models()) pairs += (pairs.empty() ? "" : ", ") + m.directions();
  throw RequestError(400, fmt::format("no model translates '{}' to '{}' (this server has {})",
                                      source, target, pairs));
}

const ServedModel& model_named(const DecodingQueue& service, const std::string& name) {
  if (const ServedModel* model = service.find(name)) return *model;
  std::string names;
  for (const auto& m : service.models()) names += (names.empty() ? "" : ", ") + m.name;
  throw RequestError(404, fmt::format("no model named '{}' (this server has {})", name, names));
}

std::vector<std::string> source_languages(const DecodingQueue& service, const std::string& target) {
  std::vector<std::string> sources;
  for (const auto& m : service.models()) {
    for (const auto& pair : m.pairs()) {
      if ((target.empty() || pair.tgt == target) &&
          std::find(sources.begin(), sources.end(), pair.src) == sources.end()) {
        sources.push_back(pair.src);
      }
    }
  }
  return sources;
}

}  // namespace nmtzoo
