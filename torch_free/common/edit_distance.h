// SPDX-License-Identifier: MIT
// Levenshtein distance, for "did you mean" suggestions of keys and names.
#pragma once

#include <cstddef>
#include <string>

namespace nmtzoo {

size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace nmtzoo
