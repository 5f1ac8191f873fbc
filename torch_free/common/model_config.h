// SPDX-License-Identifier: MIT
// The model section of a run config as plain data. It sits below both the config (which parses
// YAML into it) and the models (whose registry maps it to module options), so neither includes
// the other. No LibTorch here.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace nmtzoo {

// "auto" shares everything when the vocabulary is joint, else decoder input and output.
enum class SharingChoice { kAuto, kNone, kDecoder, kAll };

struct ModelConfig {
  std::string arch;
  // Keys every encoder-decoder has, declared by the schema.
  int64_t encoder_layers;
  int64_t decoder_layers;
  double dropout;
  double source_word_dropout;
  double target_word_dropout;
  SharingChoice share_embeddings;
  int64_t max_positions;
  // The architectures' own keys (torch_free/common/arch_options.h) by name, "d_model" -> "256",
  // each the canonical text of a value its declaration accepted; a key absent here has its default.
  // Each architecture reads its own (torch_free/archs/arch_options.h); the others' are kept, not
  // used.
  std::map<std::string, std::string> arch_options;
};

}  // namespace nmtzoo
