// SPDX-License-Identifier: MIT
#include "torch_free/common/option_values.h"

#include <fmt/format.h>

#include <cmath>
#include <exception>

namespace nmtzoo {

std::string Range::check(double value) const {
  bool ok = value >= min && (open_max ? value < max : value <= max);
  return ok ? "" : format_number(value) + " is out of range: expected " + describe();
}

std::string Range::describe() const {
  if (std::isinf(max)) return std::isinf(min) ? "any value" : ">= " + format_number(min);
  return "in [" + format_number(min) + ", " + format_number(max) + (open_max ? ")" : "]");
}

std::string parse_integer(const std::string& text, int64_t& value) {
  try {
    size_t used = 0;
    value = std::stoll(text, &used);
    if (used == text.size()) return "";
  } catch (const std::exception&) {
  }
  return "expects an integer, got '" + text + "'";
}

std::string parse_number(const std::string& text, double& value) {
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value)) return "";
  } catch (const std::exception&) {
  }
  return "expects a number, got '" + text + "'";
}

std::string format_number(double value) { return fmt::format("{}", value); }

}  // namespace nmtzoo
