// SPDX-License-Identifier: MIT
// nmtzoo's architectures (without their builders) and presets. Torch-free, in nmtzoo_common:
// a program that only reads, checks and writes configs (nmtzoo-plan) does not load LibTorch.
#include <mutex>

#include "torch_free/archs/archs.h"

namespace nmtzoo {

EmbeddingSharing resolve_sharing(SharingChoice choice, const VocabSizes& vocab, bool can_tie) {
  switch (choice) {
    case SharingChoice::kNone:
      return EmbeddingSharing::kNone;
    case SharingChoice::kDecoder:
      return EmbeddingSharing::kDecoder;
    case SharingChoice::kAll:
      return EmbeddingSharing::kAll;
    case SharingChoice::kAuto:
      if (!can_tie) return EmbeddingSharing::kNone;
      return vocab.joint ? EmbeddingSharing::kAll : EmbeddingSharing::kDecoder;
  }
  return EmbeddingSharing::kNone;
}

void register_builtin_archs() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_arch("transformer", transformer_arch());
    register_arch("rnn", rnn_arch());
    // Vaswani et al. (2017), Table 3.
    register_preset("transformer_base", "transformer",
                    {{"d_model", "512"},
                     {"ffn_dim", "2048"},
                     {"heads", "8"},
                     {"encoder_layers", "6"},
                     {"decoder_layers", "6"},
                     {"dropout", "0.1"}});
    register_preset(
        "transformer_big", "transformer_base",
        {{"d_model", "1024"}, {"ffn_dim", "4096"}, {"heads", "16"}, {"dropout", "0.3"}});
    // Sized for Multi30k (29k pairs) on a small CPU.
    register_preset("transformer_small", "transformer_base",
                    {{"d_model", "256"},
                     {"ffn_dim", "1024"},
                     {"heads", "4"},
                     {"encoder_layers", "3"},
                     {"decoder_layers", "3"},
                     {"dropout", "0.1"}});
    // Bahdanau et al. (2015), RNNsearch: m = 620, n = 1000, n' = 1000, l = 500.
    register_preset("rnn_bahdanau", "rnn",
                    {{"emb_dim", "620"},
                     {"hidden_dim", "1000"},
                     {"attention", "additive"},
                     {"attention_dim", "1000"},
                     {"attention_query", "previous"},
                     {"readout", "maxout"},
                     {"readout_dim", "500"},
                     {"cell", "gru"},
                     {"encoder_layers", "1"},
                     {"decoder_layers", "1"},
                     {"dropout", "0.0"}});
    register_preset("rnn_bahdanau_small", "rnn_bahdanau",
                    {{"emb_dim", "256"},
                     {"hidden_dim", "512"},
                     {"attention_dim", "512"},
                     {"readout_dim", "256"},
                     {"dropout", "0.3"}});
    // Cho et al. (2014): no attention, the encoder summary is the context at every step.
    register_preset("rnn_encdec", "rnn_bahdanau_small", {{"attention", "none"}});
    // Luong et al. (2015): general scoring on the current state, attentional tanh layer.
    register_preset(
        "rnn_luong", "rnn_bahdanau_small",
        {{"attention", "general"}, {"attention_query", "current"}, {"readout", "tanh"}});
  });
}

}  // namespace nmtzoo
