// SPDX-License-Identifier: MIT
#include "torch_free/data/translation_input.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "torch_free/io/text_file.h"

namespace nmtzoo {

InputFormat parse_input_format(const std::string& name) {
  if (name == "text") return InputFormat::kText;
  if (name == "tsv") return InputFormat::kTsv;
  if (name == "jsonl") return InputFormat::kJsonl;
  throw std::invalid_argument("unknown input format '" + name + "': expected text, tsv or jsonl");
}

namespace {

TranslationRequest parse_tsv(const std::string& line) {
  TranslationRequest request;
  std::vector<std::string> fields = split_fields(line, '\t');
  request.source = std::move(fields[0]);
  if (fields.size() > 1) request.prefix = std::move(fields[1]);
  for (size_t f = 2; f < fields.size(); ++f) {
    if (!fields[f].empty()) request.constraints.push_back(std::move(fields[f]));
  }
  return request;
}

std::string string_field(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto& value = object.at(key);
  if (!value.is_string()) {
    throw std::invalid_argument(
        fmt::format("{}: field \"{}\" must be a string, got {}", where, key, value.type_name()));
  }
  return value.get<std::string>();
}

TranslationRequest parse_jsonl(const std::string& line, const std::string& where) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for huge numbers
    throw std::invalid_argument(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
  if (!object.is_object()) {
    throw std::invalid_argument(fmt::format("{}: expected a JSON object {{\"src\": ...}}, got {}",
                                            where, object.type_name()));
  }
  for (const auto& item : object.items()) {
    if (item.key() != "src" && item.key() != "prefix" && item.key() != "constraints" &&
        item.key() != "target") {
      throw std::invalid_argument(
          fmt::format("{}: unknown field \"{}\" (expected src, target, prefix, constraints)", where,
                      item.key()));
    }
  }
  if (!object.contains("src")) throw std::invalid_argument(where + ": missing field \"src\"");
  TranslationRequest request;
  request.source = string_field(object, "src", where);
  if (object.contains("prefix") && !object["prefix"].is_null()) {
    request.prefix = string_field(object, "prefix", where);
  }
  if (object.contains("target") && !object["target"].is_null()) {
    request.target_lang = string_field(object, "target", where);
  }
  if (object.contains("constraints") && !object["constraints"].is_null()) {
    const auto& constraints = object["constraints"];
    if (!constraints.is_array()) {
      throw std::invalid_argument(
          fmt::format("{}: field \"constraints\" must be a list of strings, got {}", where,
                      constraints.type_name()));
    }
    for (size_t i = 0; i < constraints.size(); ++i) {
      if (!constraints[i].is_string()) {
        throw std::invalid_argument(fmt::format("{}: constraints[{}] must be a string, got {}",
                                                where, i, constraints[i].type_name()));
      }
      request.constraints.push_back(constraints[i].get<std::string>());
    }
  }
  return request;
}

// JSON escapes can carry what a text line cannot (\u0000): every field of a request is held to
// the rule of plain text lines.
TranslationRequest checked(TranslationRequest request, const std::string& where) {
  auto check = [&](const std::string& text, const std::string& field) {
    if (auto bad = find_text_problem(text)) {
      throw std::invalid_argument(fmt::format("{}: {} has {}", where, field, bad->describe()));
    }
  };
  check(request.source, "src");
  check(request.prefix, "prefix");
  for (size_t i = 0; i < request.constraints.size(); ++i) {
    check(request.constraints[i], fmt::format("constraints[{}]", i));
  }
  return request;
}

}  // namespace

TranslationRequest parse_request(const std::string& line, InputFormat format,
                                 const std::string& where) {
  switch (format) {
    case InputFormat::kText:
      return {line, {}, {}, {}};
    case InputFormat::kTsv:
      return parse_tsv(line);
    case InputFormat::kJsonl:
      return checked(parse_jsonl(line, where), where);
  }
  return {line, {}, {}, {}};
}

}  // namespace nmtzoo
