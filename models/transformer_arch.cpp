#include "models/archs.h"
#include "models/transformer.h"

namespace nmtzoo {
namespace {

std::shared_ptr<EncoderDecoder> build(const ModelConfig& c, const VocabSizes& vocab) {
  auto options = TransformerOptions(vocab.src, vocab.tgt)
                     .d_model(c.d_model)
                     .heads(c.heads)
                     .ffn_dim(c.ffn_dim)
                     .encoder_layers(c.encoder_layers)
                     .decoder_layers(c.decoder_layers)
                     .dropout(c.dropout)
                     .attention_dropout(c.attention_dropout)
                     .activation_dropout(c.activation_dropout)
                     .source_word_dropout(c.source_word_dropout)
                     .target_word_dropout(c.target_word_dropout)
                     .activation(c.activation)
                     .norm(c.norm)
                     .positions(c.positions)
                     .max_positions(c.max_positions)
                     .max_relative_positions(c.max_relative_positions)
                     .sharing(resolve_sharing(c.share_embeddings, vocab, true));
  return Transformer(options).ptr();
}

std::vector<ModelKeyProblem> check(const ModelConfig& m) {
  if (m.d_model % m.heads == 0) return {};
  return {{"heads", "(" + std::to_string(m.heads) + ") must divide model.d_model (" +
                        std::to_string(m.d_model) + ")"}};
}

double forward_flops(const ModelConfig& m, int64_t tgt_vocab, const BatchShape& s) {
  const auto [b, S, T, V, N] = BatchDims::of(s, tgt_vocab);
  const double d = static_cast<double>(m.d_model);
  const double f = static_cast<double>(m.ffn_dim);
  // Projections count 2 * rows * in * out; attention 2 * T * S * d for scores and again for the
  // weighted sum.
  // Relative positions score each query against the 2K + 1 table rows and sum them back.
  const double table_rows = 2 * static_cast<double>(m.max_relative_positions) + 1;
  const double relative = m.positions == PositionEncoding::kRelative ? 4 * table_rows * d : 0;
  const double encoder_layer =
      b * S * (2 * 4 * d * d + 2 * 2 * d * f + relative) + b * 4 * S * S * d;
  const double decoder_layer = b * T * (2 * 4 * d * d + 2 * 2 * d * d + 2 * 2 * d * f + relative) +
                               b * S * 2 * 2 * d * d + b * 4 * T * T * d + b * 4 * T * S * d;
  return static_cast<double>(m.encoder_layers) * encoder_layer +
         static_cast<double>(m.decoder_layers) * decoder_layer + 2 * N * d * V;
}

}  // namespace

ArchSpec transformer_arch() {
  return {build, check, [](const ModelConfig& m) { return m.d_model; }, forward_flops,
          [](const ModelConfig& m) { return AttentionLayout{m.decoder_layers, m.heads}; }};
}

}  // namespace nmtzoo
