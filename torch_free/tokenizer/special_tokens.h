// SPDX-License-Identifier: MIT
// The one definition of the special token ids. SentencePiece models are trained with them, every
// loaded model is checked against them, and data, models and search use only these constants.
#pragma once

#include <cstdint>

namespace nmtzoo {

inline constexpr int64_t kPadId = 0;
inline constexpr int64_t kUnkId = 1;
inline constexpr int64_t kBosId = 2;
inline constexpr int64_t kEosId = 3;

}  // namespace nmtzoo
