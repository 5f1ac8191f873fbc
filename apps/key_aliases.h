// SPDX-License-Identifier: MIT
// CLI11 options for schema keys: each alias of torch_free/config/aliases.h becomes a flag whose
// help is the key's own, and --set KEY=VALUE takes any key of the allowed sections. Values are
// collected as KeyValues for apply_key_values(), which parses and checks them with the schema.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "torch_free/config/aliases.h"
#include "torch_free/config/loader.h"
#include "torch_free/config/schema.h"

namespace nmtzoo {

inline void add_key_aliases(CLI::App& app, const std::vector<KeyAlias>& aliases,
                            std::vector<KeyValue>& values) {
  for (const auto& alias : aliases) {
    const OptionSpec* option = find_option(alias.key);
    if (option == nullptr) throw std::logic_error("alias of unknown key " + alias.key);
    const std::string help = option->help + " (" + alias.key + ", default from the checkpoint)";
    const std::string name = alias_name(alias);
    if (alias.is_switch) {
      app.add_flag_callback(
          alias.flags,
          [&values, key = alias.key, name] {
            values.push_back({key, "true", name});
          },
          help);
    } else {
      app.add_option_function<std::string>(
             alias.flags,
             [&values, key = alias.key, name](const std::string& v) {
               values.push_back({key, v, name});
             },
             help)
          ->type_name(option->type);
    }
  }
}

// --set KEY=VALUE for keys of `sections` only (e.g. {"decoding"}); other keys are an error at
// parse time naming the allowed sections.
inline void add_set_option(CLI::App& app, const std::vector<std::string>& sections,
                           std::vector<KeyValue>& values) {
  std::string allowed;
  for (const auto& section : sections) allowed += (allowed.empty() ? "" : ", ") + section + ".*";
  app.add_option_function<std::vector<std::string>>(
         "--set",
         [&values, sections, allowed](const std::vector<std::string>& texts) {
           for (const auto& text : texts) {
             const auto equals = text.find('=');
             const std::string key = text.substr(0, equals);
             const auto dot = key.find('.');
             const bool in_section =
                 dot != std::string::npos &&
                 std::find(sections.begin(), sections.end(), key.substr(0, dot)) != sections.end();
             if (equals == std::string::npos || equals == 0 || !in_section) {
               throw CLI::ValidationError(
                   "--set", "'" + text + "': expected KEY=VALUE with KEY one of " + allowed +
                                " (see nmtzoo-config --reference)");
             }
             values.push_back({key, text.substr(equals + 1), "--set " + key});
           }
         },
         "override a key of " + allowed + " (YAML value)")
      ->type_name("KEY=VALUE");
}

}  // namespace nmtzoo
