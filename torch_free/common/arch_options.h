// SPDX-License-Identifier: MIT
// The model keys architectures declare for themselves, as the configuration schema reads them.
//
// An architecture owns its options: it declares each of its `model.*` keys (type, default, range,
// help) once, on its own options struct (torch_free/archs/arch_options.h), and registering the
// architecture publishes those keys here. torch_free/config, which may not see libtorch/models/,
// turns every published key into a schema entry, so the YAML, --set, presets, checkpoints and
// `nmtzoo-config --reference` treat them as any other key. Keys stay flat (`model.d_model`, not
// `model.transformer.d_model`): run configs and checkpoints written before keep loading.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace nmtzoo {

struct ArchOptionSpec {
  std::string key;            // without "model."
  std::string type;           // for documentation: "int in [1, 262144]", "one of: gru, lstm"
  std::string default_value;  // canonical text
  std::string help;
  // What is wrong with `text` ("" if nothing); on success `canonical` is the value's own text
  // (so "1e3" and "1000" are one setting).
  std::function<std::string(const std::string& text, std::string& canonical)> parse;
  std::vector<std::string> archs;  // the architectures declaring it, in registration order
};

// Publishes `arch`'s keys. A key another architecture declared already is shared when it has the
// same type and default, and a std::logic_error otherwise (one key, one meaning).
void publish_arch_options(const std::string& arch, const std::vector<ArchOptionSpec>& options);

// Every published key once, in publication order.
std::vector<ArchOptionSpec> published_arch_options();

// The published keys `arch` did not declare (only other architectures did), as config keys
// ("model.emb_dim"): a run of `arch` neither reads nor stores them, and they do not describe its
// model.
std::set<std::string> keys_of_other_archs(const std::string& arch);

// Changes whenever keys are published: the schema rebuilds itself when it differs.
uint64_t arch_options_generation();

}  // namespace nmtzoo
