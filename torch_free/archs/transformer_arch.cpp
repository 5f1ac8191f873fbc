// SPDX-License-Identifier: MIT
// Torch-free (compiled into nmtzoo_common): the builder is libtorch/models/builtin_models.cpp's.
#include "torch_free/archs/archs.h"

namespace nmtzoo {
namespace {

const ArchOptions<TransformerOptions>& keys() {
  static const ArchOptions<TransformerOptions> declared = [] {
    ArchOptions<TransformerOptions> keys(TransformerOptions(0, 0));
    keys.integer("d_model", NMTZOO_FIELD(d_model), kModelSize, "Transformer model size");
    keys.integer("ffn_dim", NMTZOO_FIELD(ffn_dim), kModelSize,
                 "Transformer feed-forward inner size");
    keys.integer("heads", NMTZOO_FIELD(heads), Range{1, 1024}, "Transformer attention heads");
    keys.real("attention_dropout", NMTZOO_FIELD(attention_dropout), kProbability,
              "Transformer dropout on attention weights");
    keys.real("activation_dropout", NMTZOO_FIELD(activation_dropout), kProbability,
              "Transformer dropout inside the feed-forward net");
    keys.choice<Activation>("activation", NMTZOO_FIELD(activation),
                            {{"relu", Activation::kRelu}, {"gelu", Activation::kGelu}},
                            "Transformer feed-forward activation");
    keys.choice<NormPosition>("norm", NMTZOO_FIELD(norm),
                              {{"post", NormPosition::kPost}, {"pre", NormPosition::kPre}},
                              "Transformer LayerNorm after (paper) or before each sublayer");
    keys.choice<PositionEncoding>("positions", NMTZOO_FIELD(positions),
                                  {{"sinusoidal", PositionEncoding::kSinusoidal},
                                   {"learned", PositionEncoding::kLearned},
                                   {"relative", PositionEncoding::kRelative}},
                                  "Transformer positional encoding: sinusoids or a learned table "
                                  "added to the embeddings, or relative (Shaw et al. 2018: learned "
                                  "embeddings of key-query distances in every self-attention)");
    keys.integer("max_relative_positions", NMTZOO_FIELD(max_relative_positions), Range{1, 4096},
                 "positions: relative only: distances beyond this many tokens share one embedding "
                 "(Shaw et al. clip at 16)");
    return keys;
  }();
  return declared;
}

TransformerOptions options_of(const ModelConfig& c) { return transformer_module_options(c, {}); }

std::vector<ModelKeyProblem> check(const ModelConfig& c) {
  const auto m = options_of(c);
  if (m.d_model() % m.heads() == 0) return {};
  return {{"heads", "(" + std::to_string(m.heads()) + ") must divide model.d_model (" +
                        std::to_string(m.d_model()) + ")"}};
}

double forward_flops(const ModelConfig& c, int64_t tgt_vocab, const BatchShape& s) {
  const auto m = options_of(c);
  const auto [b, S, T, V, N] = BatchDims::of(s, tgt_vocab);
  const double d = static_cast<double>(m.d_model());
  const double f = static_cast<double>(m.ffn_dim());
  // Projections count 2 * rows * in * out; attention 2 * T * S * d for scores and again for the
  // weighted sum.
  // Relative positions score each query against the 2K + 1 table rows and sum them back.
  const double table_rows = 2 * static_cast<double>(m.max_relative_positions()) + 1;
  const double relative = m.positions() == PositionEncoding::kRelative ? 4 * table_rows * d : 0;
  const double encoder_layer =
      b * S * (2 * 4 * d * d + 2 * 2 * d * f + relative) + b * 4 * S * S * d;
  const double decoder_layer = b * T * (2 * 4 * d * d + 2 * 2 * d * d + 2 * 2 * d * f + relative) +
                               b * S * 2 * 2 * d * d + b * 4 * T * T * d + b * 4 * T * S * d;
  return static_cast<double>(m.encoder_layers()) * encoder_layer +
         static_cast<double>(m.decoder_layers()) * decoder_layer + 2 * N * d * V;
}

}  // namespace

TransformerOptions transformer_module_options(const ModelConfig& c, const VocabSizes& vocab) {
  auto options = keys().read(c, with_shared_keys(TransformerOptions(vocab.src, vocab.tgt), c));
  return options.sharing(resolve_sharing(c.share_embeddings, vocab, true));
}

ArchSpec transformer_arch() {
  return {keys().specs(),
          nullptr,
          check,
          [](const ModelConfig& c) { return options_of(c).d_model(); },
          forward_flops,
          [](const ModelConfig& c) {
            const auto m = options_of(c);
            return AttentionLayout{m.decoder_layers(), m.heads()};
          }};
}

}  // namespace nmtzoo
