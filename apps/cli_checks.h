// SPDX-License-Identifier: MIT
// CLI11 validators the apps share beyond CLI11's own.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace nmtzoo {

// CLI11's NonNegativeNumber lets "nan" and "inf" through: they parse as doubles and no
// comparison with them fails.
inline CLI::Validator finite_non_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < 0) {
          return "expected a finite number >= 0, got '" + text + "'";
        }
        return {};
      },
      "FINITE>=0");
}

}  // namespace nmtzoo
