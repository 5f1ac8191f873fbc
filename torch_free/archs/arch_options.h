// SPDX-License-Identifier: MIT
// How an architecture declares its own model keys: once, on its module options struct.
//
//   ArchOptions<TransformerOptions> keys(TransformerOptions(0, 0));  // its defaults are the keys'
//   keys.integer("d_model", NMTZOO_FIELD(d_model), kModelSize, "Transformer model size");
//   keys.choice("norm", NMTZOO_FIELD(norm), {{"post", NormPosition::kPost}, ...}, "...");
//
// `specs()` is what the registry publishes to the configuration schema
// (torch_free/common/arch_options.h); `read()` fills an options struct from a ModelConfig, so the
// architecture builds its modules from the very struct its keys are declared on (no field-by-field
// copy). No LibTorch here beyond the TORCH_ARG structs the caller brings.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "torch_free/common/arch_options.h"
#include "torch_free/common/model_config.h"
#include "torch_free/common/option_values.h"

// A TORCH_ARG field of an options struct, as a reference: NMTZOO_FIELD(d_model).
#define NMTZOO_FIELD(name) \
  [](auto& options_) -> auto& { return options_.name(); }

namespace nmtzoo {

// Far beyond any trainable model, and small enough that a typo fails while the config is read,
// naming the key, instead of as an allocation failure while the model is built.
inline const Range kModelSize{1, 1 << 18};

template <class Options>
class ArchOptions {
 public:
  explicit ArchOptions(Options defaults) : defaults_(std::move(defaults)) {}

  template <class Field>
  void integer(const char* key, Field field, Range range, const char* help) {
    add(
        key, "int " + range.describe(), help, field,
        [range](const std::string& text, int64_t& value) {
          std::string error = parse_integer(text, value);
          return error.empty() ? range.check(static_cast<double>(value)) : error;
        },
        [](int64_t value) { return std::to_string(value); });
  }

  template <class Field>
  void real(const char* key, Field field, Range range, const char* help) {
    add(
        key, "float " + range.describe(), help, field,
        [range](const std::string& text, double& value) {
          std::string error = parse_number(text, value);
          return error.empty() ? range.check(value) : error;
        },
        [](double value) { return format_number(value); });
  }

  template <class T, class Field>
  void choice(const char* key, Field field, ChoiceTable<T> table, const char* help) {
    add(
        key, "one of: " + choice_names(table), help, field,
        [table](const std::string& text, T& value) { return parse_choice(table, text, value); },
        [table](const T& value) { return std::string(choice_name(table, value)); });
  }

  const std::vector<ArchOptionSpec>& specs() const { return specs_; }

  // `options` with each declared key set from `config` (absent keys: the declared default).
  // Throws std::invalid_argument naming the key for text the declaration refuses, which only a
  // ModelConfig filled by hand can hold.
  Options read(const ModelConfig& config, Options options) const {
    for (const auto& entry : entries_) {
      auto value = config.arch_options.find(entry.key);
      if (value == config.arch_options.end()) continue;
      std::string error = entry.assign(value->second, options);
      if (!error.empty()) throw std::invalid_argument("model." + entry.key + " " + error);
    }
    return options;
  }
  Options read(const ModelConfig& config) const { return read(config, defaults_); }

 private:
  struct Entry {
    std::string key;
    std::function<std::string(const std::string&, Options&)> assign;
  };

  template <class Field, class Parse, class Format>
  void add(const char* key, std::string type, const char* help, Field field, Parse parse,
           Format format) {
    using T = std::decay_t<decltype(field(std::declval<Options&>()))>;
    auto assign = [field, parse](const std::string& text, Options& options) {
      T value{};
      std::string error = parse(text, value);
      if (error.empty()) field(options) = value;
      return error;
    };
    Options defaults = defaults_;
    const std::string default_text = format(field(defaults));
    entries_.push_back({key, assign});
    specs_.push_back(
        ArchOptionSpec{key,
                       std::move(type),
                       default_text,
                       help,
                       [parse, format](const std::string& text, std::string& canonical) {
                         T value{};
                         std::string error = parse(text, value);
                         if (error.empty()) canonical = format(value);
                         return error;
                       },
                       {}});
  }

  Options defaults_;
  std::vector<Entry> entries_;
  std::vector<ArchOptionSpec> specs_;
};

}  // namespace nmtzoo
