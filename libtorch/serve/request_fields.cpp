// SPDX-License-Identifier: MIT
#include "libtorch/serve/request_fields.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "libtorch/serve/decoding_queue.h"
#include "torch_free/common/edit_distance.h"
#include "torch_free/config/schema.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {

using nlohmann::json;

namespace {

// nlohmann's message without its "[json.exception.type.id] " prefix.
std::string json_message(const json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

}  // namespace

json parse_request_fields(const std::string& type, const std::string& body_text,
                          const std::multimap<std::string, std::string>& params) {
  if (type.rfind("application/json", 0) == 0) {
    json body;
    std::string field;  // the top-level key whose value is being read
    try {
      body = json::parse(body_text, [&field](int depth, json::parse_event_t event, json& parsed) {
        if (depth == 1 && event == json::parse_event_t::key) field = parsed.get<std::string>();
        return true;
      });
    } catch (const json::parse_error& e) {
      throw RequestError(400, std::string("malformed JSON body: ") + e.what());
    } catch (const json::out_of_range& e) {  // a number beyond a double's range
      throw RequestError(400, field.empty()
                                  ? "malformed JSON body: " + json_message(e)
                                  : fmt::format("field '{}': {}", field, json_message(e)));
    }
    if (!body.is_object()) throw RequestError(400, "the JSON body must be an object");
    return body;
  }
  json fields = json::object();
  for (const auto& [key, value] : params) {
    if (auto bad = find_invalid_utf8(value)) {
      throw RequestError(400,
                         fmt::format("field '{}' is not valid UTF-8 (byte {})", key, *bad + 1));
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
  if (!value.is_array())
    throw RequestError(400, fmt::format("field '{}' must be a string or a list of strings", name));
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
  if (!fields[name].is_string())
    throw RequestError(400, fmt::format("field '{}' must be a string", name));
  return fields[name].get<std::string>();
}

void check_text(const std::string& text, const std::string& what) {
  if (auto bad = find_text_problem(text))
    throw RequestError(400, fmt::format("{}: {}", what, bad->describe()));
}

bool bool_field(const json& fields, const char* name, bool fallback) {
  if (!fields.contains(name) || fields[name].is_null()) return fallback;
  if (!fields[name].is_boolean())
    throw RequestError(400, fmt::format("field '{}' must be true or false", name));
  return fields[name].get<bool>();
}

// Every line of every text, checked against the limits; `lines_of[i]` counts text i's lines.
std::vector<std::string> split_lines(const std::vector<std::string>& texts,
                                     const ServeConfig& limits, const char* field,
                                     std::vector<size_t>& lines_of) {
  std::vector<std::string> lines;
  for (size_t t = 0; t < texts.size(); ++t) {
    size_t start = 0;
    size_t count = 0;
    const std::string& text = texts[t];
    while (true) {
      const size_t end = text.find('\n', start);
      std::string line =
          text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (auto bad = find_text_problem(line)) {
        throw RequestError(400, fmt::format("field '{}' item {} line {}: {}", field, t + 1,
                                            count + 1, bad->describe()));
      }
      const auto chars = static_cast<int64_t>(std::count_if(line.begin(), line.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      }));
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

void add_prefixes_and_constraints(const json& fields, std::vector<TranslationRequest>& sentences,
                                  SearchOptions& options) {
  if (fields.contains("prefix")) {
    const auto prefixes = texts_of(fields, "prefix");
    if (prefixes.size() != sentences.size()) {
      throw RequestError(400, fmt::format("field 'prefix' has {} items for {} sentences",
                                          prefixes.size(), sentences.size()));
    }
    for (size_t i = 0; i < prefixes.size(); ++i) {
      check_text(prefixes[i], fmt::format("field 'prefix' item {}", i + 1));
      sentences[i].prefix = prefixes[i];
    }
  }
  if (fields.contains("constraints")) {
    const json& all = fields["constraints"];
    if (!all.is_array() || all.size() != sentences.size()) {
      throw RequestError(
          400, "field 'constraints' must be a list with one list of phrases per sentence");
    }
    for (size_t i = 0; i < all.size(); ++i) {
      if (!all[i].is_array())
        throw RequestError(
            400, fmt::format("field 'constraints' item {} must be a list of strings", i + 1));
      for (const auto& phrase : all[i]) {
        if (!phrase.is_string())
          throw RequestError(
              400, fmt::format("field 'constraints' item {} must be a list of strings", i + 1));
        sentences[i].constraints.push_back(phrase.get<std::string>());
        check_text(sentences[i].constraints.back(),
                   fmt::format("field 'constraints' item {}", i + 1));
      }
    }
    if (options.constraints == ConstraintMode::kNone)
      options.constraints = ConstraintMode::kOrdered;
  }
}

// The model's decoding options with the request's overrides: every decoding key the schema lets a
// request set, each checked as the config key decoding.<name> would be (same ranges, same
// messages).
void check_field_names(const json& fields, const std::vector<std::string>& own) {
  std::vector<std::string> known = own;
  for (const OptionSpec* option : section_options("decoding")) {
    const std::string key = option->request_field.empty()
                                ? option->key.substr(std::string("decoding.").size())
                                : option->request_field;
    if (option->per_request) {
      known.push_back(key);
    } else if (fields.contains(key)) {
      throw RequestError(
          400, fmt::format(
                   "field '{}' is {}, fixed when the server starts; it cannot be set per request",
                   key, option->key));
    }
  }
  for (const auto& [name, unused] : fields.items()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string closest;
    size_t best = 3;
    for (const auto& candidate : known) {
      const size_t cost = edit_distance(name, candidate);
      if (cost < best) best = cost, closest = candidate;
    }
    throw RequestError(400,
                       fmt::format("unknown field '{}'{}", name,
                                   closest.empty() ? "" : "; did you mean '" + closest + "'?"));
  }
}

SearchOptions decoding_options(const ServedModel& model, const json& fields) {
  RunConfig config;
  config.decoding = model.defaults;
  for (const OptionSpec* option : section_options("decoding")) {
    const std::string key = option->request_field.empty()
                                ? option->key.substr(std::string("decoding.").size())
                                : option->request_field;
    if (!option->per_request || !fields.contains(key)) continue;
    const json& value = fields[key];
    if (value.is_object() || value.is_array())
      throw RequestError(400, fmt::format("field '{}' must be a single value", key));
    std::string error;
    try {
      error = option->assign(
          YAML::Load(value.is_string() ? value.get<std::string>() : value.dump()), config);
    } catch (const YAML::Exception& e) {
      error = e.what();
    }
    if (!error.empty()) throw RequestError(400, fmt::format("field '{}': {}", key, error));
  }
  for (const auto& problem : config.decoding.validate()) {
    const OptionSpec* option = find_option("decoding." + problem.key);
    const std::string field =
        option && !option->request_field.empty() ? option->request_field : problem.key;
    throw RequestError(400, fmt::format("field '{}' {}", field, problem.message));
  }
  return SearchOptions(config.decoding);
}

}  // namespace nmtzoo
