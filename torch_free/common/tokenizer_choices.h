// SPDX-License-Identifier: MIT
// The choices tokenizer keys take, shared by the config (which parses them from YAML) and the
// SentencePiece front end, so the config does not include the tokenizer.
#pragma once

namespace nmtzoo {

enum class SubwordModel { kBpe, kUnigram };
// Which side of a training pair subword sampling re-segments (tokenizer.sampling_sides).
enum class SamplingSides { kSource, kTarget, kBoth };

}  // namespace nmtzoo
