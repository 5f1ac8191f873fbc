// SPDX-License-Identifier: MIT
// Torch-free (compiled into nmtzoo_common); build_model is libtorch/models/builtin_models.cpp's.
#include "torch_free/archs/registry.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "torch_free/common/edit_distance.h"

namespace nmtzoo {
namespace {

struct Preset {
  std::string base;
  PresetValues values;
};

struct Registry {
  std::map<std::string, ArchSpec> archs;
  std::map<std::string, Preset> presets;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

bool is_registered(const std::string& name) {
  return registry().archs.count(name) != 0 || registry().presets.count(name) != 0;
}

}  // namespace

void register_arch(const std::string& name, ArchSpec spec) {
  if (is_registered(name)) throw std::logic_error("model '" + name + "' is registered twice");
  publish_arch_options(name, spec.options);
  registry().archs.emplace(name, std::move(spec));
}

void set_arch_builder(const std::string& arch, ArchBuilder build) {
  auto it = registry().archs.find(arch);
  if (it == registry().archs.end()) {
    throw std::logic_error("a builder for unregistered architecture '" + arch + "'");
  }
  if (it->second.build) throw std::logic_error("architecture '" + arch + "' has a builder already");
  it->second.build = std::move(build);
}

void register_preset(const std::string& name, const std::string& base, PresetValues values) {
  if (is_registered(name)) throw std::logic_error("model '" + name + "' is registered twice");
  if (!is_registered(base)) {
    throw std::logic_error("preset '" + name + "' builds on unregistered '" + base + "'");
  }
  registry().presets.emplace(name, Preset{base, std::move(values)});
}

std::vector<std::string> registered_models() {
  std::vector<std::string> names;
  for (const auto& [name, unused] : registry().archs) names.push_back(name);
  for (const auto& [name, unused] : registry().presets) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const PresetValues& preset_values(const std::string& name) {
  static const PresetValues none;
  auto it = registry().presets.find(name);
  return it == registry().presets.end() ? none : it->second.values;
}

std::vector<std::string> preset_chain(const std::string& name) {
  resolve_arch(name);  // throws for an unknown name
  std::vector<std::string> chain{name};
  while (registry().presets.count(chain.back()) != 0) {
    chain.push_back(registry().presets.at(chain.back()).base);
  }
  return chain;
}

std::string resolve_arch(const std::string& name) {
  if (!is_registered(name)) {
    std::string names;
    std::string closest;
    size_t best = 4;
    for (const auto& candidate : registered_models()) {
      names += (names.empty() ? "" : ", ") + candidate;
      size_t cost = edit_distance(name, candidate);
      if (cost < best) best = cost, closest = candidate;
    }
    std::string message = "unknown model '" + name + "'";
    if (!closest.empty()) message += "; did you mean '" + closest + "'?";
    throw std::invalid_argument(message + " (registered: " + names + ")");
  }
  std::string arch = name;
  while (registry().presets.count(arch) != 0) arch = registry().presets.at(arch).base;
  return arch;
}

const ArchSpec& arch_spec(const std::string& name) {
  return registry().archs.at(resolve_arch(name));
}

PresetValues arch_option_values(const ModelConfig& config) {
  PresetValues values;
  for (const auto& option : arch_spec(config.arch).options) {
    auto value = config.arch_options.find(option.key);
    values.emplace_back(option.key,
                        value == config.arch_options.end() ? option.default_value : value->second);
  }
  return values;
}

double training_flops(const ModelConfig& config, int64_t tgt_vocab, const BatchShape& shape) {
  return 3.0 * arch_spec(config.arch).forward_flops(config, tgt_vocab, shape);
}

}  // namespace nmtzoo
