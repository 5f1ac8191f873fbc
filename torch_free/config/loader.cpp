// SPDX-License-Identifier: MIT
#include "torch_free/config/loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <ostream>
#include <set>

#include "torch_free/common/arch_options.h"
#include "torch_free/common/edit_distance.h"
#include "torch_free/io/atomic_file.h"

namespace nmtzoo {
namespace {

std::string unknown_key_message(const std::string& key) {
  std::string suggestion = suggest_key(key);
  std::string message = "unknown key '" + key + "'";
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  return message;
}

std::string unknown_section_message(const std::string& section) {
  std::string message = "unknown section '" + section + "'";
  size_t best = 3;
  std::string nearest;
  for (const auto& candidate : config_sections()) {
    size_t cost = edit_distance(section, candidate);
    if (cost < best) best = cost, nearest = candidate;
  }
  if (!nearest.empty()) return message + "; did you mean '" + nearest + "'?";
  std::string all;
  for (const auto& s : config_sections()) all += (all.empty() ? "" : ", ") + s;
  return message + " (sections: " + all + ")";
}

// Assigns one value; records origin and explicitness, or appends the problem.
void assign_option(RunConfig& config, const std::string& key, const YAML::Node& value,
                   const std::string& where, std::vector<std::string>& problems) {
  const OptionSpec* option = find_option(key);
  if (option == nullptr) {
    problems.push_back(where + ": " + unknown_key_message(key));
    return;
  }
  std::string error = option->assign(value, config);
  if (!error.empty()) {
    problems.push_back(where + ": " + key + " " + error);
    return;
  }
  config.explicit_keys.insert(key);
  config.origin[key] = where;
}

// Parses with `load`, turning yaml-cpp's exceptions into ConfigErrors naming `path`.
template <class Load>
YAML::Node parse_yaml(const std::string& path, Load&& load) {
  try {
    return load();
  } catch (const YAML::BadFile&) {
    throw ConfigError({"cannot read config file '" + path + "'"});
  } catch (const YAML::ParserException& e) {
    throw ConfigError({fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1,
                                   e.mark.column + 1, e.msg)});
  }
}

void read_yaml(const YAML::Node& root, const std::string& path, RunConfig& config,
               std::vector<std::string>& problems) {
  if (root.IsNull()) return;
  auto where = [&](const YAML::Node& node) {
    return fmt::format("{}:{}", path, node.Mark().line + 1);
  };
  if (!root.IsMap()) {
    problems.push_back(where(root) +
                       ": a config is a mapping of sections (data, tokenizer, model, "
                       "training, decoding)");
    return;
  }
  // YAML also allows lists and mappings as keys, which as<std::string>() would throw on.
  auto is_name = [&](const YAML::Node& key) {
    if (!key.IsSequence() && !key.IsMap()) return true;
    problems.push_back(where(key) + ": a key must be a name, not a list or a mapping");
    return false;
  };
  std::set<std::string> seen;
  for (const auto& section_entry : root) {
    if (!is_name(section_entry.first)) continue;
    const std::string section = section_entry.first.as<std::string>();
    const auto& known = config_sections();
    if (std::find(known.begin(), known.end(), section) == known.end()) {
      problems.push_back(where(section_entry.first) + ": " + unknown_section_message(section));
      continue;
    }
    if (!seen.insert(section).second) {
      problems.push_back(where(section_entry.first) + ": duplicate section '" + section + "'");
      continue;
    }
    if (section_entry.second.IsNull()) continue;
    if (!section_entry.second.IsMap()) {
      problems.push_back(where(section_entry.first) + ": section '" + section +
                         "' must be a mapping of keys to values");
      continue;
    }
    for (const auto& entry : section_entry.second) {
      if (!is_name(entry.first)) continue;
      const std::string key = section + "." + entry.first.as<std::string>();
      if (!seen.insert(key).second) {
        problems.push_back(where(entry.first) + ": duplicate key '" + key + "'");
        continue;
      }
      assign_option(config, key, entry.second, where(entry.first), problems);
    }
  }
}

void add_problem_if(std::vector<std::string>& problems, bool failed, const RunConfig& config,
                    const std::string& key, const std::string& message) {
  if (failed) problems.push_back(config.where(key) + ": " + key + " " + message);
}

}  // namespace

RunConfig default_config() {
  RunConfig config;
  for (const auto& option : config_schema()) {
    std::string error = option.assign(YAML::Load(option.default_value), config);
    if (!error.empty()) throw std::logic_error("schema default of " + option.key + ": " + error);
  }
  return config;
}

namespace {

// The well-formed "key=value" texts as KeyValues; a problem for each other text.
std::vector<KeyValue> split_overrides(const std::vector<std::string>& overrides,
                                      std::vector<std::string>& problems) {
  std::vector<KeyValue> values;
  for (const auto& text : overrides) {
    auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      problems.push_back("--set " + text + ": expected key=value, e.g. training.lr=0.0005");
      continue;
    }
    std::string key = text.substr(0, equals);
    values.push_back({key, text.substr(equals + 1), "--set " + key});
  }
  return values;
}

}  // namespace

std::vector<KeyValue> parse_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> problems;
  std::vector<KeyValue> values = split_overrides(overrides, problems);
  if (!problems.empty()) throw ConfigError(problems);
  return values;
}

void apply_overrides(RunConfig& config, const std::vector<std::string>& overrides) {
  std::vector<std::string> problems;
  const std::vector<KeyValue> values = split_overrides(overrides, problems);
  try {
    apply_key_values(config, values);
  } catch (const ConfigError& e) {
    problems.insert(problems.end(), e.problems.begin(), e.problems.end());
  }
  if (!problems.empty()) throw ConfigError(problems);
}

void apply_key_values(RunConfig& config, const std::vector<KeyValue>& values) {
  std::vector<std::string> problems;
  for (const auto& [key, text, where] : values) {
    YAML::Node value;
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      const bool set = where.rfind("--set ", 0) == 0;
      problems.push_back(where + (set ? "=" : " ") + text + ": value is not valid YAML: " + e.msg);
      continue;
    }
    assign_option(config, key, value, where, problems);
  }
  if (!problems.empty()) throw ConfigError(problems);
}

YAML::Node load_yaml_file(const std::string& path) {
  return parse_yaml(path, [&] { return YAML::LoadFile(path); });
}

RunConfig parse_config(const std::string& yaml, const std::string& source_name) {
  RunConfig config = default_config();
  config.source = source_name;
  std::vector<std::string> problems;
  read_yaml(parse_yaml(source_name, [&] { return YAML::Load(yaml); }), source_name, config,
            problems);
  if (!problems.empty()) throw ConfigError(problems);
  return config;
}

RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  RunConfig config = default_config();
  config.source = path;
  std::vector<std::string> problems;
  read_yaml(load_yaml_file(path), path, config, problems);
  try {
    apply_overrides(config, overrides);
  } catch (const ConfigError& e) {
    problems.insert(problems.end(), e.problems.begin(), e.problems.end());
  }
  if (!problems.empty()) throw ConfigError(problems);
  return config;
}

std::string set_default_option(RunConfig& config, const std::string& key,
                               const std::string& yaml_value, const std::string& origin) {
  const OptionSpec* option = find_option(key);
  if (option == nullptr) return unknown_key_message(key);
  if (config.explicit_keys.count(key) != 0) return "";
  std::string error = option->assign(YAML::Load(yaml_value), config);
  if (error.empty()) config.origin[key] = origin;
  return error.empty() ? "" : key + " " + error;
}

void check_config(const RunConfig& config) {
  std::vector<std::string> problems;
  std::set<std::string> directions;
  for (const auto& pair : config.language_pairs()) {
    const bool valid = !pair.src.empty() && !pair.tgt.empty() && pair.src != pair.tgt &&
                       pair.tgt.find('-') == std::string::npos;
    add_problem_if(problems, config.multilingual() && !valid, config, "data.directions",
                   "has '" + pair.name() +
                       "', which is not two different language codes joined by '-' (de-en)");
    add_problem_if(problems, !directions.insert(pair.name()).second, config, "data.directions",
                   "lists '" + pair.name() + "' twice");
  }
  add_problem_if(
      problems, config.multilingual() && !config.tokenizer.joint, config, "data.directions",
      "needs tokenizer.joint: true (one vocabulary for every language, with their tags)");
  add_problem_if(problems, config.multilingual() && config.tokenizer.sampling_alpha > 0, config,
                 "tokenizer.sampling_alpha",
                 "is not supported with data.directions (resampled sources would lose their "
                 "target-language tags)");
  add_problem_if(problems, config.data.src_lang == config.data.tgt_lang, config, "data.tgt_lang",
                 "equals data.src_lang ('" + config.data.src_lang + "')");
  add_problem_if(problems,
                 !config.tokenizer.joint && config.model.share_embeddings == SharingChoice::kAll,
                 config, "model.share_embeddings",
                 "is 'all', which needs tokenizer.joint: true (one vocabulary for both sides)");
  add_problem_if(problems, config.training.max_tokens < config.data.max_len + 2, config,
                 "training.max_tokens",
                 fmt::format("({}) must hold one pair of data.max_len ({}) plus BOS/EOS",
                             config.training.max_tokens, config.data.max_len));
  add_problem_if(problems, config.model.max_positions < config.data.max_len + 2, config,
                 "model.max_positions",
                 fmt::format("({}) must cover data.max_len ({}) plus BOS/EOS",
                             config.model.max_positions, config.data.max_len));
  // The rules within one section are the section's own (config.h's validate()).
  auto add_section = [&](const std::string& section, const std::vector<KeyProblem>& found) {
    for (const auto& problem : found)
      add_problem_if(problems, true, config, section + "." + problem.key, problem.message);
  };
  add_section("tokenizer", config.tokenizer.validate());
  add_section("training", config.training.validate());
  add_section("decoding", config.decoding.validate());
  if (!problems.empty()) throw ConfigError(problems);
}

std::string to_yaml(const RunConfig& config, const std::string& architecture) {
  const std::set<std::string> left_out =
      architecture.empty() ? std::set<std::string>{} : keys_of_other_archs(architecture);
  std::string text;
  std::string section;
  for (const auto& option : config_schema()) {
    if (left_out.count(option.key) > 0) continue;
    auto dot = option.key.find('.');
    if (option.key.compare(0, dot, section) != 0 || section.size() != dot) {
      section = option.key.substr(0, dot);
      text += section + ":\n";
    }
    text += fmt::format("  {}: {}  # {}\n", option.key.substr(dot + 1), option.format(config),
                        option.help);
  }
  return text;
}

void save_config(const RunConfig& config, const std::string& architecture,
                 const std::string& path) {
  write_file_atomically(path, [&](std::ostream& out) { out << to_yaml(config, architecture); });
}

std::string config_reference_markdown() {
  std::string text =
      "# Configuration reference\n\n"
      "Generated by `nmtzoo-config --reference` from `torch_free/config/schema.cpp`, where keys "
      "are "
      "declared, and the registered architectures' own `model` keys (each declared once, on its "
      "options struct, in `torch_free/archs/*_arch.cpp`). Precedence, lowest first: default, model "
      "preset, YAML file, `--set key=value`.\n";
  std::string section;
  for (const auto& option : config_schema()) {
    auto dot = option.key.find('.');
    std::string this_section = option.key.substr(0, dot);
    if (this_section != section) {
      section = this_section;
      text += "\n## `" + section + "`\n\n| key | type | default | meaning |\n|---|---|---|---|\n";
    }
    std::string help = option.help;
    for (size_t pos = 0; (pos = help.find('|', pos)) != std::string::npos; pos += 2) {
      help.replace(pos, 1, "\\|");
    }
    text += fmt::format("| `{}` | {} | `{}` | {} |\n", option.key.substr(dot + 1), option.type,
                        option.default_value, help);
  }
  return text;
}

}  // namespace nmtzoo
