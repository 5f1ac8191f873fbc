// The built-in architectures' registry entries, one per module family (*_arch.cpp beside it).
#pragma once

#include "models/options/transformer_options.h"
#include "models/registry.h"

namespace nmtzoo {

ArchSpec transformer_arch();  // models/transformer_arch.cpp
ArchSpec rnn_arch();          // models/rnn_arch.cpp

// The embedding sharing a SharingChoice means for these vocabularies; `can_tie` is whether the
// output projection can be the target embedding (same size).
EmbeddingSharing resolve_sharing(SharingChoice choice, const VocabSizes& vocab, bool can_tie);

}  // namespace nmtzoo
