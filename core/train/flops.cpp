#include "core/train/flops.h"

#include "core/config/config.h"

namespace nmtzoo {

double forward_flops(const ModelConfig& m, const std::string& arch, int64_t tgt_vocab,
                     const BatchShape& s) {
  const double b = static_cast<double>(s.rows);
  const double S = static_cast<double>(s.src_len);
  const double T = static_cast<double>(s.tgt_len);
  const double V = static_cast<double>(tgt_vocab);
  const double N = static_cast<double>(s.tgt_tokens);
  if (arch == "transformer") {
    const double d = static_cast<double>(m.d_model);
    const double f = static_cast<double>(m.ffn_dim);
    // Projections count 2 * rows * in * out; attention 2 * T * S * d for scores and again for
    // the weighted sum.
    const double encoder_layer = b * S * (2 * 4 * d * d + 2 * 2 * d * f) + b * 4 * S * S * d;
    const double decoder_layer = b * T * (2 * 4 * d * d + 2 * 2 * d * d + 2 * 2 * d * f) +
                                 b * S * 2 * 2 * d * d + b * 4 * T * T * d + b * 4 * T * S * d;
    return static_cast<double>(m.encoder_layers) * encoder_layer +
           static_cast<double>(m.decoder_layers) * decoder_layer + 2 * N * d * V;
  }
  // RNN: gates are 3 (GRU) or 4 (LSTM) matrices of the input and of the state.
  const double gates = m.cell == RnnCell::kLstm ? 4 : 3;
  const double e = static_cast<double>(m.emb_dim);
  const double n = static_cast<double>(m.hidden_dim);
  const double a = static_cast<double>(m.attention_dim);
  const double l = static_cast<double>(m.readout_dim);
  const double c = 2 * n;  // annotation size
  double encoder = 0;
  for (int64_t layer = 0; layer < m.encoder_layers; ++layer) {
    const double input = layer == 0 ? e : c;
    encoder += 2 * b * S * 2 * gates * n * (input + n);  // two directions
  }
  const bool luong = m.attention_query == AttentionQuery::kCurrent;
  const double first_input = e + (luong ? l : c);
  double decoder_step = 2 * gates * n * (first_input + n);
  for (int64_t layer = 1; layer < m.decoder_layers; ++layer) decoder_step += 2 * gates * n * (2 * n);
  double attention_setup = 0;
  if (m.attention) {
    const bool additive = *m.attention == AttentionScore::kAdditive;
    decoder_step += additive ? 2 * n * a + 2 * S * a : 2 * S * n;  // scores
    decoder_step += 2 * S * c;                                       // context
    if (additive) attention_setup = 2 * b * S * c * a;               // U h_j, once
    if (*m.attention == AttentionScore::kGeneral) attention_setup = 2 * b * S * c * n;
  }
  const double readout_in = luong ? n + c : n + e + c;
  const double readout_out = m.readout == Readout::kMaxout ? 2 * l : l;
  decoder_step += 2 * readout_in * readout_out;
  const double init = 2 * b * n * n * static_cast<double>(m.decoder_layers);
  return encoder + attention_setup + init + b * T * decoder_step + 2 * N * l * V;
}

}  // namespace nmtzoo
