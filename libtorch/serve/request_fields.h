// SPDX-License-Identifier: MIT
// What nmtzoo-serve reads from a request, without HTTP: its fields (a JSON body or form-encoded
// parameters), texts, lines within the server's limits, and the decoding options it may set.
// Every problem is a RequestError naming the field.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "libtorch/search/search.h"
#include "torch_free/config/config.h"
#include "torch_free/data/translation_input.h"

namespace nmtzoo {

struct ServedModel;

// A request the client got wrong: the status and what to tell it.
struct RequestError : std::runtime_error {
  int status;
  RequestError(int status_code, const std::string& message)
      : std::runtime_error(message), status(status_code) {}
};

// Refuses a field that is neither one of `own` nor a decoding key a request may set, naming it
// and the closest known name; a decoding key fixed when the server starts is refused saying so
// (a typo such as "beem" was ignored, the request decoded with the default beam).
void check_field_names(const nlohmann::json& fields, const std::vector<std::string>& own);

// The fields of a body of Content-Type `type`: a JSON object, or else `params` (form-encoded or
// query parameters; a repeated parameter becomes a list, each checked to be UTF-8). A number
// beyond a double's range is an error naming its field.
nlohmann::json parse_request_fields(const std::string& type, const std::string& body,
                                    const std::multimap<std::string, std::string>& params);

// Field `name` (`q`, `text`): a string or a list of strings.
std::vector<std::string> texts_of(const nlohmann::json& fields, const char* name);

// A string field, or `fallback` when absent or null.
std::string string_field(const nlohmann::json& fields, const char* name,
                         const std::string& fallback);

// The rule of every text that enters (text_file.h's find_text_problem: UTF-8, no NUL), for
// fields not split into lines; `what` names the field in the error.
void check_text(const std::string& text, const std::string& what);

// A boolean field (JSON true or false), or `fallback` when absent or null.
bool bool_field(const nlohmann::json& fields, const char* name, bool fallback);

// Every line of every text, checked against the limits; `lines_of[i]` counts text i's lines.
std::vector<std::string> split_lines(const std::vector<std::string>& texts,
                                     const ServeConfig& limits, const char* field,
                                     std::vector<size_t>& lines_of);

// Each sentence's `prefix` (a list, one per sentence) and `constraints` (a list of phrase lists,
// one per sentence), checked; constraints without a `constraint_order` are met in order.
void add_prefixes_and_constraints(const nlohmann::json& fields,
                                  std::vector<TranslationRequest>& sentences,
                                  SearchOptions& options);

// The model's decoding options with the request's overrides: every decoding key the schema lets a
// request set (OptionSpec::per_request), each checked as the config key decoding.<name> would be.
SearchOptions decoding_options(const ServedModel& model, const nlohmann::json& fields);

}  // namespace nmtzoo
