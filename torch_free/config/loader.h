// SPDX-License-Identifier: MIT
// Loading, overriding, checking and writing run configs. Precedence, lowest first: schema default,
// model preset (applied by the model registry), YAML file, command-line override.
#pragma once

#include <string>
#include <vector>

#include "torch_free/config/config.h"
#include "torch_free/config/schema.h"

namespace nmtzoo {

RunConfig default_config();

// The YAML file at `path`; a file that cannot be read or parsed is a ConfigError naming it (and
// the line and column of a syntax error).
YAML::Node load_yaml_file(const std::string& path);

// Reads `path` and applies `overrides` ("training.lr=0.0005", the value in YAML syntax). Throws
// ConfigError listing every problem found (file and line, or the override), with suggestions.
RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Parses YAML text (e.g. a config stored in a checkpoint); `source_name` appears in errors.
RunConfig parse_config(const std::string& yaml, const std::string& source_name);

// Applies "key=value" overrides to `config`, marking the keys explicit. Throws ConfigError.
void apply_overrides(RunConfig& config, const std::vector<std::string>& overrides);

// A value given on the command line for one key (--set key=value, or a flag aliasing the key).
struct KeyValue {
  std::string key;         // dotted
  std::string yaml_value;  // the value in YAML syntax
  std::string
      where;  // how it was given, for errors and config.where(): "--beam", "--set decoding.beam"
};
// "key=value" texts (--set) as KeyValues; throws ConfigError naming each text without a key.
std::vector<KeyValue> parse_overrides(const std::vector<std::string>& overrides);
// Applies them in order, marking the keys explicit; throws ConfigError listing every problem.
void apply_key_values(RunConfig& config, const std::vector<KeyValue>& values);

// Sets `key` from YAML text unless the user set it explicitly; returns "" or the problem.
// Presets use it, so their values are checked by the same parser as the user's.
std::string set_default_option(RunConfig& config, const std::string& key,
                               const std::string& yaml_value, const std::string& origin);

// Cross-key checks (a key's value valid alone but not with another's). Throws ConfigError.
void check_config(const RunConfig& config);

// Every key, grouped by section, in YAML that load_config reads back to the same config, except
// the model keys only other architectures than `architecture` declared
// (torch_free/archs/registry.h's resolve_arch(config.model.arch); "" keeps every architecture's
// keys). Only the run's own architecture's keys are written because a program that registered an
// architecture of its own would otherwise write that architecture's keys into every run folder and
// checkpoint, and the stock apps, which do not know them, would refuse those files.
std::string to_yaml(const RunConfig& config, const std::string& architecture);
void save_config(const RunConfig& config, const std::string& architecture,
                 const std::string& path);  // atomic

// Markdown reference of every key: type, default, help.
std::string config_reference_markdown();

}  // namespace nmtzoo
