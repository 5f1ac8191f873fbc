// SPDX-License-Identifier: MIT
// The built-in architectures' registry entries, one per module family (*_arch.cpp beside it).
// They are torch-free and come without a builder (ArchSpec::build empty): register_builtin_archs()
// registers them so, and register_builtin_models() (nmtzoo_models) gives them their builders.
#pragma once

#include "torch_free/archs/arch_options.h"
#include "torch_free/archs/options/rnn_options.h"
#include "torch_free/archs/options/transformer_options.h"
#include "torch_free/archs/registry.h"

namespace nmtzoo {

ArchSpec transformer_arch();  // torch_free/archs/transformer_arch.cpp
ArchSpec rnn_arch();          // torch_free/archs/rnn_arch.cpp

// The module options a config and vocabularies mean (what the builders build).
TransformerOptions transformer_module_options(const ModelConfig& config, const VocabSizes& vocab);
RnnSeq2SeqOptions rnn_module_options(const ModelConfig& config, const VocabSizes& vocab);

// A batch's sizes as FLOP counts write them: rows b, padded lengths S and T, target vocabulary V
// and real target tokens N (the output projection runs on these only).
struct BatchDims {
  double b, S, T, V, N;
  static BatchDims of(const BatchShape& shape, int64_t tgt_vocab) {
    return {static_cast<double>(shape.rows), static_cast<double>(shape.src_len),
            static_cast<double>(shape.tgt_len), static_cast<double>(tgt_vocab),
            static_cast<double>(shape.tgt_tokens)};
  }
};

// The embedding sharing a SharingChoice means for these vocabularies; `can_tie` is whether the
// output projection can be the target embedding (same size).
EmbeddingSharing resolve_sharing(SharingChoice choice, const VocabSizes& vocab, bool can_tie);

// `options` with the keys every encoder-decoder has (the schema declares those) set from `config`.
template <class Options>
Options with_shared_keys(Options options, const ModelConfig& config) {
  return options.encoder_layers(config.encoder_layers)
      .decoder_layers(config.decoder_layers)
      .dropout(config.dropout)
      .source_word_dropout(config.source_word_dropout)
      .target_word_dropout(config.target_word_dropout)
      .max_positions(config.max_positions);
}

}  // namespace nmtzoo
