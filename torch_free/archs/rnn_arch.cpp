// SPDX-License-Identifier: MIT
// Torch-free (compiled into nmtzoo_common): the builder is libtorch/models/builtin_models.cpp's.
#include "torch_free/archs/archs.h"
#include "torch_free/archs/options/rnn_options.h"

#include <string>

namespace nmtzoo {
namespace {

const ArchOptions<RnnSeq2SeqOptions>& keys() {
  static const ArchOptions<RnnSeq2SeqOptions> declared = [] {
    ArchOptions<RnnSeq2SeqOptions> keys(RnnSeq2SeqOptions(0, 0));
    keys.integer("emb_dim", NMTZOO_FIELD(emb_dim), kModelSize, "RNN word embedding size");
    keys.integer("hidden_dim", NMTZOO_FIELD(hidden_dim), kModelSize, "RNN hidden state size");
    keys.choice<RnnCell>("cell", NMTZOO_FIELD(cell),
                         {{"gru", RnnCell::kGru}, {"lstm", RnnCell::kLstm}}, "RNN cell type");
    keys.choice<std::optional<AttentionScore>>(
        "attention", NMTZOO_FIELD(attention),
        {{"additive", AttentionScore::kAdditive},
         {"dot", AttentionScore::kDot},
         {"general", AttentionScore::kGeneral},
         {"scaled_dot", AttentionScore::kScaledDot},
         {"none", std::nullopt}},
        "RNN attention scoring; none = fixed context from the encoder (Cho et al. 2014)");
    keys.integer("attention_dim", NMTZOO_FIELD(attention_dim), kModelSize,
                 "RNN additive attention hidden size");
    keys.choice<AttentionQuery>("attention_query", NMTZOO_FIELD(attention_query),
                                {{"previous", AttentionQuery::kPrevious},
                                 {"current", AttentionQuery::kCurrent},
                                 {"conditional", AttentionQuery::kConditional}},
                                "RNN attention queried by s_{i-1} (Bahdanau), by the new state "
                                "with an attentional layer (Luong), or by the first cell of a "
                                "conditional GRU/LSTM whose second cell reads the context "
                                "(Nematus)");
    keys.choice<Readout>("readout", NMTZOO_FIELD(readout),
                         {{"maxout", Readout::kMaxout}, {"tanh", Readout::kTanh}},
                         "RNN deep output before the softmax");
    keys.integer("readout_dim", NMTZOO_FIELD(readout_dim), kPositive,
                 "RNN deep output size (after maxout)");
    return keys;
  }();
  return declared;
}

RnnSeq2SeqOptions options_of(const ModelConfig& c) { return rnn_module_options(c, {}); }

std::vector<ModelKeyProblem> check(const ModelConfig& c) {
  const auto m = options_of(c);
  std::vector<ModelKeyProblem> problems;
  if (m.attention() == AttentionScore::kDot || m.attention() == AttentionScore::kScaledDot) {
    problems.push_back({"attention",
                        "dot scoring compares the decoder state (hidden_dim) with "
                        "annotations (2 x hidden_dim); use general or additive"});
  }
  if (!m.attention() && m.attention_query() != AttentionQuery::kPrevious) {
    const std::string query =
        m.attention_query() == AttentionQuery::kCurrent ? "current" : "conditional";
    problems.push_back(
        {"attention_query", "'" + query + "' needs attention (model.attention is none)"});
  }
  const bool ties =
      c.share_embeddings == SharingChoice::kDecoder || c.share_embeddings == SharingChoice::kAll;
  if (ties && m.readout_dim() != m.emb_dim()) {
    problems.push_back({"share_embeddings",
                        "ties the output projection to the target embedding, which needs "
                        "model.readout_dim == model.emb_dim (" +
                            std::to_string(m.readout_dim()) + " vs " + std::to_string(m.emb_dim()) +
                            ")"});
  }
  return problems;
}

// Gates are 3 (GRU) or 4 (LSTM) matrices of the input and of the state.
double forward_flops(const ModelConfig& config, int64_t tgt_vocab, const BatchShape& s) {
  const auto m = options_of(config);
  const auto [b, S, T, V, N] = BatchDims::of(s, tgt_vocab);
  const double gates = m.cell() == RnnCell::kLstm ? 4 : 3;
  const double e = static_cast<double>(m.emb_dim());
  const double n = static_cast<double>(m.hidden_dim());
  const double a = static_cast<double>(m.attention_dim());
  const double l = static_cast<double>(m.readout_dim());
  const double c = 2 * n;  // annotation size
  double encoder = 0;
  for (int64_t layer = 0; layer < m.encoder_layers(); ++layer) {
    const double input = layer == 0 ? e : c;
    encoder += 2 * b * S * 2 * gates * n * (input + n);  // two directions
  }
  const bool luong = m.attention_query() == AttentionQuery::kCurrent;
  const bool conditional = m.attention_query() == AttentionQuery::kConditional;
  const double first_input = e + (luong ? l : conditional ? 0 : c);
  double decoder_step = 2 * gates * n * (first_input + n);
  if (conditional) decoder_step += 2 * gates * n * (c + n);  // the second cell reads c_i
  for (int64_t layer = 1; layer < m.decoder_layers(); ++layer)
    decoder_step += 2 * gates * n * (2 * n);
  double attention_setup = 0;
  if (m.attention()) {
    const bool additive = *m.attention() == AttentionScore::kAdditive;
    decoder_step += additive ? 2 * n * a + 2 * S * a : 2 * S * n;  // scores
    decoder_step += 2 * S * c;                                     // context
    if (additive) attention_setup = 2 * b * S * c * a;             // U h_j, once
    if (*m.attention() == AttentionScore::kGeneral) attention_setup = 2 * b * S * c * n;
  }
  const double readout_in = luong ? n + c : n + e + c;
  const double readout_out = m.readout() == Readout::kMaxout ? 2 * l : l;
  decoder_step += 2 * readout_in * readout_out;
  const double init = 2 * b * n * n * static_cast<double>(m.decoder_layers());
  return encoder + attention_setup + init + b * T * decoder_step + 2 * N * l * V;
}

}  // namespace

RnnSeq2SeqOptions rnn_module_options(const ModelConfig& c, const VocabSizes& vocab) {
  auto options = keys().read(c, with_shared_keys(RnnSeq2SeqOptions(vocab.src, vocab.tgt), c));
  const bool can_tie = options.readout_dim() == options.emb_dim();
  return options.sharing(resolve_sharing(c.share_embeddings, vocab, can_tie));
}

ArchSpec rnn_arch() {
  // The schedule scales by the recurrent state size.
  return {keys().specs(),
          nullptr,
          check,
          [](const ModelConfig& c) { return options_of(c).hidden_dim(); },
          forward_flops,
          [](const ModelConfig& c) {
            return options_of(c).attention() ? AttentionLayout{1, 1} : AttentionLayout{};
          }};
}

}  // namespace nmtzoo
