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
};

const std::vector<OptionSpec>& config_schema();
const OptionSpec* find_option(const std::string& key);
const std::vector<std::string>& config_sections();

// The closest valid dotted key to `key` (same section preferred), or "" if none is close.
std::string suggest_key(const std::string& key);

}  // namespace nmtzoo
