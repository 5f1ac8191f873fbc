// SPDX-License-Identifier: MIT
#include "torch_free/common/arch_options.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace nmtzoo {
namespace {

struct Published {
  std::mutex mutex;
  std::vector<ArchOptionSpec> options;
  uint64_t generation = 0;
};

Published& published() {
  static Published instance;
  return instance;
}

}  // namespace

void publish_arch_options(const std::string& arch, const std::vector<ArchOptionSpec>& options) {
  auto& registry = published();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const auto& option : options) {
    ArchOptionSpec* existing = nullptr;
    for (auto& candidate : registry.options) {
      if (candidate.key == option.key) existing = &candidate;
    }
    if (existing == nullptr) {
      registry.options.push_back(option);
      registry.options.back().archs = {arch};
      continue;
    }
    if (existing->type != option.type || existing->default_value != option.default_value) {
      throw std::logic_error(
          "model." + option.key + " of architecture '" + arch + "' (" + option.type + ", default " +
          option.default_value + ") differs from the key of '" + existing->archs.front() + "' (" +
          existing->type + ", default " + existing->default_value + "): give it another name");
    }
    existing->archs.push_back(arch);
  }
  ++registry.generation;
}

std::vector<ArchOptionSpec> published_arch_options() {
  auto& registry = published();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.options;
}

std::set<std::string> keys_of_other_archs(const std::string& arch) {
  std::set<std::string> keys;
  for (const auto& option : published_arch_options()) {
    if (std::find(option.archs.begin(), option.archs.end(), arch) == option.archs.end()) {
      keys.insert("model." + option.key);
    }
  }
  return keys;
}

uint64_t arch_options_generation() {
  auto& registry = published();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.generation;
}

}  // namespace nmtzoo
