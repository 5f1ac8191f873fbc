// SPDX-License-Identifier: MIT
// The one declaration of every configuration key: type, default, range and help.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace nmtzoo {

struct RunConfig;

// Carries every problem found, each already prefixed with where it was found.
struct ConfigError : std::runtime_error {
  explicit ConfigError(std::vector<std::string> problems);
  std::vector<std::string> problems;
};

struct OptionSpec {
  std::string key;            // dotted: "model.d_model"
  std::string type;           // for documentation: "int >= 1", "one of: bpe, unigram"
  std::string default_value;  // as YAML text
  std::string help;
  // Parses `node` into the config; returns "" or what is wrong with the value.
  std::function<std::string(const YAML::Node& node, RunConfig& config)> assign;
  // The current value, as YAML text (a flow sequence for lists).
  std::function<std::string(const RunConfig& config)> format;
  // A decoding key a client of nmtzoo-serve may set in a request; the others (batch size, number
  // format, shortlist) are fixed when the server starts, as they load files or repack weights.
  bool per_request = false;
  // Its field name in a server request when that differs from the key's last part (a request's
  // own data may already use the name: `constraints` is the per-sentence phrase lists).
  std::string request_field;
};

const std::vector<OptionSpec>& config_schema();
const OptionSpec* find_option(const std::string& key);
const std::vector<std::string>& config_sections();

// The section's keys in declaration order ("decoding" -> decoding.beam, decoding.nbest, ...).
std::vector<const OptionSpec*> section_options(const std::string& section);

// One line of every key of `section` with its value: equal texts mean equal settings.
std::string section_fingerprint(const RunConfig& config, const std::string& section);

// The closest valid dotted key to `key` (same section preferred), or "" if none is close.
std::string suggest_key(const std::string& key);

}  // namespace nmtzoo
