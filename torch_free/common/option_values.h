// SPDX-License-Identifier: MIT
// Scalar option values as text: the parsing, range checks and named choices shared by the
// configuration schema (torch_free/config) and the architectures' own model keys
// (libtorch/models/). No YAML and no LibTorch here: callers hand over the scalar's text.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

// Inclusive bounds; `open_max` makes the upper bound exclusive (probabilities below 1).
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool open_max = false;

  std::string check(double value) const;  // "" or "<value> is out of range: expected ..."
  std::string describe() const;           // ">= 1", "in [0, 1)", "any value"
};

inline const Range kPositive{1};
inline const Range kNonNegative{0};
inline const Range kProbability{0, 1, true};

// Each returns "" or what is wrong with `text`, naming the text.
std::string parse_integer(const std::string& text, int64_t& value);
std::string parse_number(const std::string& text, double& value);  // finite only

// The shortest text that reads back as `value`.
std::string format_number(double value);

template <class T>
using ChoiceTable = std::vector<std::pair<const char*, T>>;

template <class T>
std::string choice_names(const ChoiceTable<T>& table) {
  std::string names;
  for (const auto& [name, unused] : table) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

template <class T>
const char* choice_name(const ChoiceTable<T>& table, const T& value) {
  for (const auto& [name, candidate] : table) {
    if (candidate == value) return name;
  }
  return "?";
}

template <class T>
std::string parse_choice(const ChoiceTable<T>& table, const std::string& text, T& value) {
  for (const auto& [name, candidate] : table) {
    if (text == name) {
      value = candidate;
      return "";
    }
  }
  return "expects one of " + choice_names(table) + ", got '" + text + "'";
}

}  // namespace nmtzoo
