// SPDX-License-Identifier: MIT
#include "libtorch/models/rnn_seq2seq.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <optional>
#include <utility>
#include <vector>

#include "libtorch/kernels/deferred_gradients.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/kernels/step_attention.h"
#include "libtorch/models/embedding.h"
#include "libtorch/models/functional.h"

namespace nmtzoo {

namespace {

constexpr const char* kContextProjectionsSlot = "context_projections";

}  // namespace

RnnSeq2SeqImpl::RnnSeq2SeqImpl(const RnnSeq2SeqOptions& options_) : options(options_) { reset(); }

void RnnSeq2SeqImpl::reset() {
  const int64_t m = options.emb_dim();
  const int64_t n = options.hidden_dim();
  const int64_t l = options.readout_dim();
  const bool share_all = options.sharing() == EmbeddingSharing::kAll;
  TORCH_CHECK(!share_all || options.src_vocab() == options.tgt_vocab(),
              "sharing all embeddings needs one vocabulary, but got source ", options.src_vocab(),
              " and target ", options.tgt_vocab());
  TORCH_CHECK(options.sharing() == EmbeddingSharing::kNone || l == m,
              "tying the output projection to the target embedding needs readout_dim == "
              "emb_dim, but got ",
              l, " and ", m);
  TORCH_CHECK(options.attention().has_value() || !(luong() || conditional()),
              "attention_query 'current' and 'conditional' need attention");

  src_embed = register_module("src_embed", make_token_embedding(options.src_vocab(), m));
  if (!share_all)
    tgt_embed = register_module("tgt_embed", make_token_embedding(options.tgt_vocab(), m));

  const double between_layers = options.encoder_layers() > 1 ? options.dropout() : 0.0;
  if (lstm()) {
    encoder_lstm =
        register_module("encoder", torch::nn::LSTM(torch::nn::LSTMOptions(m, n)
                                                       .num_layers(options.encoder_layers())
                                                       .bidirectional(true)
                                                       .batch_first(true)
                                                       .dropout(between_layers)));
  } else {
    encoder_gru =
        register_module("encoder", torch::nn::GRU(torch::nn::GRUOptions(m, n)
                                                      .num_layers(options.encoder_layers())
                                                      .bidirectional(true)
                                                      .batch_first(true)
                                                      .dropout(between_layers)));
  }
  init_proj = register_module("init_proj", torch::nn::Linear(n, options.decoder_layers() * n));

  const int64_t context_dim = 2 * n;
  const int64_t first_input = m + (luong() ? l : conditional() ? 0 : context_dim);
  decoder_cells = register_module("decoder_cells", torch::nn::ModuleList());
  auto add_cell = [&](int64_t input) {
    if (lstm()) {
      decoder_cells->push_back(torch::nn::LSTMCell(input, n));
    } else {
      decoder_cells->push_back(torch::nn::GRUCell(input, n));
    }
  };
  for (int64_t layer = 0; layer < options.decoder_layers(); ++layer) {
    add_cell(layer == 0 ? first_input : n);
    if (layer == 0 && conditional()) add_cell(context_dim);  // RNN_2
  }
  if (options.attention()) {
    attention = register_module("attention", Attention(AttentionOptions(n, context_dim)
                                                           .score(*options.attention())
                                                           .hidden_dim(options.attention_dim())));
  }
  const int64_t readout_input = luong() ? n + context_dim : n + m + context_dim;
  const int64_t readout_output = options.readout() == Readout::kMaxout ? 2 * l : l;
  readout = register_module("readout", torch::nn::Linear(readout_input, readout_output));
  if (options.sharing() == EmbeddingSharing::kNone) {
    output_proj = register_module(
        "output_proj",
        torch::nn::Linear(torch::nn::LinearOptions(l, options.tgt_vocab()).bias(false)));
  }
  reset_parameters();
}

void RnnSeq2SeqImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const int64_t n = options.hidden_dim();
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    Tensor& parameter = item.value();
    if (name.find("_embed.") != std::string::npos) continue;  // set by make_token_embedding
    if (parameter.dim() == 1) {
      parameter.zero_();
    } else if (name.find("weight_hh") != std::string::npos) {
      // Recurrent matrices: one orthogonal block per gate, as in Bahdanau et al.
      for (int64_t gate = 0; gate < parameter.size(0) / n; ++gate) {
        Tensor block = parameter.narrow(0, gate * n, n);
        torch::nn::init::orthogonal_(block);
      }
    } else {
      torch::nn::init::xavier_uniform_(parameter);
    }
  }
}

Tensor RnnSeq2SeqImpl::dropout(const Tensor& x) {
  return apply_dropout(x, options.dropout(), is_training());
}

// Why not LibTorch's packed sequences: its packed RNN on CPU projects every token's input once
// and takes each step's rows with narrow, and each narrow's backward zero-fills and adds a
// gradient the size of the whole projection: quadratic in the source length, 330 of ~910 ms
// outside the products per RNN recipe update on one thread (profile). On unpacked input LibTorch
// unbinds the projection instead (one stack in the backward). The forward direction reads the
// padded rows as they are (padding after the words cannot reach them); the backward direction
// reads each sentence reversed within its length, so its padding also comes after its words.
// Between layers, LibTorch's dropout on the whole (B, S, 2n) output: with several layers its
// masks differ from the packed path's, drawn over the words alone.
RnnSeq2SeqImpl::EncoderOutput RnnSeq2SeqImpl::run_encoder(const Tensor& embedded,
                                                          const Tensor& pad_mask) {
  const int64_t batch = embedded.size(0), positions = embedded.size(1), n = options.hidden_dim();
  const int64_t layers = options.encoder_layers();
  const Tensor lengths = pad_mask.logical_not().sum(1).unsqueeze(1);  // (B, 1)
  TORCH_CHECK(lengths.min().item<int64_t>() > 0, "every source sentence needs at least one token");
  const Tensor steps = torch::arange(positions, lengths.options()).unsqueeze(0);
  const Tensor reversed =
      torch::where(steps < lengths, lengths - 1 - steps, steps).unsqueeze(2);  // (B, S, 1)
  auto reverse = [&](const Tensor& x) {
    return x.gather(1, reversed.expand({batch, positions, x.size(2)}));
  };
  const std::vector<Tensor> weights =
      lstm() ? encoder_lstm->all_weights() : encoder_gru->all_weights();
  const double between_layers =
      lstm() ? encoder_lstm->options.dropout() : encoder_gru->options.dropout();
  const Tensor zeros = torch::zeros({1, batch, n}, embedded.options());
  // One direction of one layer over (B, S, in), its weights at `first` of the module's list.
  auto direction = [&](const Tensor& input, size_t first) {
    const at::TensorList params(weights.data() + first, 4);
    if (lstm()) {
      return std::get<0>(
          at::lstm(input, {zeros, zeros}, params, true, 1, 0.0, is_training(), false, true));
    }
    return std::get<0>(at::gru(input, zeros, params, true, 1, 0.0, is_training(), false, true));
  };
  Tensor input = embedded, forward_out, backward_out;
  for (int64_t layer = 0; layer < layers; ++layer) {
    if (layer > 0) input = at::dropout(input, between_layers, is_training());
    forward_out = direction(input, static_cast<size_t>(8 * layer));
    backward_out = reverse(direction(reverse(input), static_cast<size_t>(8 * layer + 4)));
    input = torch::cat({forward_out, backward_out}, 2);
  }
  EncoderOutput out;
  out.memory = input.masked_fill(pad_mask.unsqueeze(2), 0.0);
  out.forward_last =
      forward_out.gather(1, (lengths - 1).unsqueeze(2).expand({batch, 1, n})).squeeze(1);
  out.backward_first = backward_out.select(1, 0);
  return out;
}

DecoderState RnnSeq2SeqImpl::encode(const Tensor& src_tokens, const Tensor& src_pad_mask) {
  TORCH_CHECK(src_tokens.dim() == 2 && src_pad_mask.sizes() == src_tokens.sizes(),
              "src_tokens and src_pad_mask must both be (B, S), but got ", src_tokens.sizes(),
              " and ", src_pad_mask.sizes());
  const int64_t batch = src_tokens.size(0);
  const int64_t n = options.hidden_dim();
  Tensor embedded = dropout(apply_word_dropout(src_embed->forward(src_tokens),
                                               options.source_word_dropout(), is_training()));
  const EncoderOutput encoded = run_encoder(embedded, src_pad_mask);
  const Tensor& memory = encoded.memory;
  const Tensor& forward_last = encoded.forward_last;
  const Tensor& backward_first = encoded.backward_first;
  DecoderState state;
  state.set(kMemorySlot, memory, SlotKind::kSource);
  state.set(kMemoryPadMaskSlot, src_pad_mask, SlotKind::kSource);
  if (attention) {
    state.set("keys", attention->project_keys(memory), SlotKind::kSource);
  } else {
    state.set("context", torch::cat({forward_last, backward_first}, 1), SlotKind::kSource);
  }
  Tensor hidden = torch::tanh(apply_linear(backward_first, *init_proj))
                      .view({batch, options.decoder_layers(), n});
  state.set("hidden", hidden, SlotKind::kStep);
  if (lstm()) state.set("cell", torch::zeros_like(hidden), SlotKind::kStep);
  if (luong()) {
    state.set("feed", torch::zeros({batch, options.readout_dim()}, hidden.options()),
              SlotKind::kStep);
  }
  return state;
}

// The context c_i = sum_j a_ij h_j enters a Bahdanau-style decoder only through linear maps: the
// input gates of the cell that reads it and the readout (their last 2n columns, W). So
// W c_i = sum_j a_ij (W h_j): with W h_j made once per source sentence, a step takes the
// attention's weighted sum of those projections instead of c_i and its two products per
// hypothesis (2n x (G + R) multiply-adds per hypothesis and step, 2.6M of the recipe's ~10M),
// and beam search's hypotheses of a sentence share its projections. Only where that pays: rows
// sharing a sentence (beam search) or one sentence (the step's products would be matrix-vector
// ones). Batched greedy decoding would move the products from the steps to the source, as many,
// and sum 2.5x wider rows (measured 0.88-0.96x); training would keep (B, S, G + R) projections
// and their gradients.
bool RnnSeq2SeqImpl::projects_context(const Tensor& memory) const {
  return attention && !luong() && !is_training() && !at::GradMode::is_enabled() &&
         fast_kernels_enabled() && memory.device().is_cpu() && memory.scalar_type() == at::kFloat &&
         !at::autocast::is_cpu_enabled();
}

void RnnSeq2SeqImpl::add_context_projections(DecoderState& state) {
  if (state.contains(kContextProjectionsSlot) || !state.contains(kMemorySlot)) return;
  const auto memory = state.indexed(kMemorySlot);
  if (!projects_context(memory.value)) return;
  const int64_t sentences = memory.value.size(0);
  const bool shared = memory.rows.defined() && memory.rows.size(0) > sentences;
  if (!shared && sentences != 1) return;
  state.set(kContextProjectionsSlot, project_context(memory.value), SlotKind::kSource, memory.rows);
}

Tensor RnnSeq2SeqImpl::project_context(const Tensor& memory) {
  const int64_t context_dim = memory.size(-1);
  auto context_columns = [&](const Tensor& weight) {
    return weight.narrow(1, weight.size(1) - context_dim, context_dim);
  };
  const Tensor& cell_weight = context_cell_input().first;
  return torch::cat({apply_linear(memory, context_columns(cell_weight)),
                     apply_linear(memory, context_columns(readout->weight))},
                    -1);
}

std::pair<Tensor, Tensor> RnnSeq2SeqImpl::context_cell_input() {
  const int64_t index = context_cell();
  if (lstm()) {
    auto cell = decoder_cells->ptr<torch::nn::LSTMCellImpl>(index);
    return {cell->weight_ih, cell->bias_ih};
  }
  auto cell = decoder_cells->ptr<torch::nn::GRUCellImpl>(index);
  return {cell->weight_ih, cell->bias_ih};
}

Tensor RnnSeq2SeqImpl::read_out(const Tensor& out, const DecoderState& state) {
  if (luong()) return out;
  return state.contains(kContextProjectionsSlot) ? readout_activation(out) : apply_readout(out);
}

Tensor RnnSeq2SeqImpl::apply_readout(const Tensor& readout_input) {
  return readout_activation(apply_linear(readout_input, *readout));
}

Tensor RnnSeq2SeqImpl::readout_activation(const Tensor& pre) {
  if (options.readout() == Readout::kTanh) return torch::tanh(pre);
  // Maxout over pairs of units: t_j = max(t~_{2j-1}, t~_{2j}).
  auto shape = pre.sizes().vec();
  shape.back() = options.readout_dim();
  shape.push_back(2);
  return std::get<0>(pre.view(shape).max(-1));
}

// What the steps of a forward pass over whole target sentences share: each decoder cell's two
// products and the attention's query projection (and Luong's readout) as RecurrentLinears, whose
// weights' gradients are one product over all steps; the attention's source for its kernel, which
// sums the source's gradients over the steps (libtorch/kernels/deferred_gradients.h).
struct RnnSeq2SeqImpl::TrainingSteps {
  std::vector<RecurrentLinear> cell_input,
      cell_hidden;  // per decoder cell: W_ih, b_ih and W_hh, b_hh
  RecurrentLinear query, readout;
  std::optional<TrainingStepContext> source;
};

std::unique_ptr<RnnSeq2SeqImpl::TrainingSteps> RnnSeq2SeqImpl::training_steps(
    const DecoderState& state) {
  // Under autocast the kernels stand aside (they take float32): LibTorch's cells and attention.
  if (!fast_kernels_enabled() || !at::GradMode::is_enabled() || at::autocast::is_cpu_enabled() ||
      at::autocast::is_enabled()) {
    return nullptr;
  }
  auto steps = std::make_unique<TrainingSteps>();
  for (size_t index = 0; index < decoder_cells->size(); ++index) {
    if (lstm()) {
      const auto& cell = *decoder_cells->ptr<torch::nn::LSTMCellImpl>(index);
      steps->cell_input.emplace_back(cell.weight_ih, cell.bias_ih);
      steps->cell_hidden.emplace_back(cell.weight_hh, cell.bias_hh);
    } else {
      const auto& cell = *decoder_cells->ptr<torch::nn::GRUCellImpl>(index);
      steps->cell_input.emplace_back(cell.weight_ih, cell.bias_ih);
      steps->cell_hidden.emplace_back(cell.weight_hh, cell.bias_hh);
    }
  }
  if (attention && attention->query_proj)
    steps->query = RecurrentLinear(attention->query_proj->weight, {});
  if (luong()) steps->readout = RecurrentLinear(readout->weight, readout->bias);
  if (attention &&
      TrainingStepContext::applies(state["keys"], state[kMemorySlot], state[kMemoryPadMaskSlot])) {
    steps->source.emplace(state["keys"], state[kMemorySlot], state[kMemoryPadMaskSlot]);
  }
  return steps;
}

std::pair<Tensor, Tensor> RnnSeq2SeqImpl::step(const Tensor& embedded, DecoderState& state,
                                               const TrainingSteps* training) {
  const int64_t layers = options.decoder_layers();
  Tensor& hidden = state["hidden"];
  Tensor* cell = lstm() ? &state["cell"] : nullptr;
  // With context projections (projects_context), the attention's weighted sum is over them: the
  // context's share of the context cell's input gates (the first G columns) and of the readout's
  // pre-activation (the other R), instead of the context itself.
  const bool projected = state.contains(kContextProjectionsSlot);
  const char* attended = projected ? kContextProjectionsSlot : kMemorySlot;
  auto attend = [&](const Tensor& query) -> std::pair<Tensor, Tensor> {
    if (!attention) return {state["context"], Tensor()};
    if (training != nullptr && training->source) {
      auto [context, weights] =
          attention->forward_training_step(query, *training->source, &training->query);
      return {context, weights};
    }
    // One pass over the source as search keeps it (one copy per sentence), else gathered rows.
    const auto values = state.indexed(attended);
    const auto keys = state.indexed("keys");
    if (auto step = attention->forward_step_in_one_pass(
            query, values.value, values.rows, state[kMemoryPadMaskSlot], keys.value, keys.rows)) {
      return {std::get<0>(*step), std::get<1>(*step)};
    }
    auto [context, weights] =
        attention->forward(query, state[attended], state[kMemoryPadMaskSlot], state["keys"]);
    return {context, weights};
  };
  // Cell `index` of decoder_cells on `input` from the state (h, c); c is undefined for a GRU.
  auto advance = [&](int64_t index, const Tensor& input, const Tensor& h,
                     const Tensor& c) -> std::pair<Tensor, Tensor> {
    if (training != nullptr) {
      const auto cell_index = static_cast<size_t>(index);
      const Tensor input_gates = training->cell_input[cell_index](input);
      const Tensor hidden_gates = training->cell_hidden[cell_index](h);
      if (lstm()) {
        auto [h_next, c_next] = lstm_cell_from_gates(input_gates + hidden_gates, c);
        return {h_next, c_next};
      }
      return {gru_cell_from_gates(input_gates, hidden_gates, h), Tensor()};
    }
    if (lstm()) {
      auto [h_next, c_next] =
          lstm_cell(input, h, c, *decoder_cells->ptr<torch::nn::LSTMCellImpl>(index));
      return {h_next, c_next};
    }
    return {gru_cell(input, h, *decoder_cells->ptr<torch::nn::GRUCellImpl>(index)), Tensor()};
  };
  // The context cell's step from its input gates: the context projections' share plus, for a
  // first cell, the embedding's product (with b_ih), else b_ih alone.
  auto advance_from_projections = [&](const Tensor& projections, const Tensor& h,
                                      const Tensor& c) -> std::pair<Tensor, Tensor> {
    auto [weight, bias] = context_cell_input();
    Tensor gates = projections.narrow(1, 0, weight.size(0));
    const int64_t embedding_columns = weight.size(1) - 2 * options.hidden_dim();
    if (embedding_columns > 0) {
      gates = apply_linear(embedded, weight.narrow(1, 0, embedding_columns), bias) + gates;
    } else {
      gates = gates + bias;
    }
    const int64_t index = context_cell();
    if (lstm()) {
      auto [h_next, c_next] = lstm_cell_from_input_gates(
          gates, h, c, *decoder_cells->ptr<torch::nn::LSTMCellImpl>(index));
      return {h_next, c_next};
    }
    return {gru_cell_from_input_gates(gates, h, *decoder_cells->ptr<torch::nn::GRUCellImpl>(index)),
            Tensor()};
  };
  // The readout's pre-activation from the top state, the embedding and the projections' share.
  auto readout_from_projections = [&](const Tensor& top, const Tensor& projections) {
    const int64_t shares = readout->weight.size(0);
    const int64_t own_columns = top.size(1) + embedded.size(1);
    return apply_linear(torch::cat({top, embedded}, 1), readout->weight.narrow(1, 0, own_columns),
                        readout->bias) +
           projections.narrow(1, projections.size(1) - shares, shares);
  };
  auto previous_cell = [&](int64_t layer) { return lstm() ? cell->select(1, layer) : Tensor(); };
  // Runs the layers above those already in `new_hidden` (and `new_cell`, whose entries are
  // undefined for a GRU), then replaces the state.
  auto run_cells = [&](Tensor input, std::vector<Tensor> new_hidden, std::vector<Tensor> new_cell) {
    for (auto layer = static_cast<int64_t>(new_hidden.size()); layer < layers; ++layer) {
      const int64_t index = conditional() ? layer + 1 : layer;
      auto [h_next, c_next] = advance(index, input, hidden.select(1, layer), previous_cell(layer));
      new_hidden.push_back(h_next);
      new_cell.push_back(c_next);
      input = dropout(h_next);
    }
    hidden = torch::stack(new_hidden, 1);
    if (lstm()) *cell = torch::stack(new_cell, 1);
  };

  if (luong()) {
    Tensor& feed = state["feed"];
    run_cells(torch::cat({embedded, feed}, 1), {}, {});
    Tensor query = hidden.select(1, layers - 1);
    auto [context, weights] = attend(query);
    const Tensor readout_input = torch::cat({query, context}, 1);
    feed = training != nullptr ? readout_activation(training->readout(readout_input))
                               : apply_readout(readout_input);
    return {feed, weights};
  }
  if (conditional()) {
    auto [intermediate, intermediate_cell] =
        advance(0, embedded, hidden.select(1, 0), previous_cell(0));  // s'_i
    auto [context, weights] = attend(intermediate);
    auto [first, first_cell] =
        projected ? advance_from_projections(context, intermediate, intermediate_cell)
                  : advance(1, context, intermediate, intermediate_cell);  // s_i
    run_cells(dropout(first), {first}, {first_cell});
    if (projected)
      return {readout_from_projections(hidden.select(1, layers - 1), context), weights};
    return {torch::cat({hidden.select(1, layers - 1), embedded, context}, 1), weights};
  }
  Tensor query = hidden.select(1, layers - 1);  // s_{i-1}
  auto [context, weights] = attend(query);
  if (projected) {
    auto [first, first_cell] =
        advance_from_projections(context, hidden.select(1, 0), previous_cell(0));
    run_cells(dropout(first), {first}, {first_cell});
    return {readout_from_projections(query, context), weights};
  }
  run_cells(torch::cat({embedded, context}, 1), {}, {});
  return {torch::cat({query, embedded, context}, 1), weights};
}

Tensor RnnSeq2SeqImpl::decode_step(const Tensor& prev_tokens, DecoderState& state) {
  if (state.step == 0) add_context_projections(state);
  Tensor embedded = dropout(apply_word_dropout(target_table()->forward(prev_tokens.view({-1})),
                                               options.target_word_dropout(), is_training()));
  auto [out, weights] = step(embedded, state);
  Tensor t = read_out(out, state);
  if (state.record_attention && weights.defined()) {
    state.attention = weights;
    state.layer_attention = {weights.unsqueeze(1)};
  }
  ++state.step;
  return step_log_probs(dropout(t), output_projection(), state);
}

Tensor RnnSeq2SeqImpl::features(const Tensor& src_tokens, const Tensor& src_pad_mask,
                                const Tensor& tgt_in) {
  DecoderState state = encode(src_tokens, src_pad_mask);
  Tensor embedded = dropout(apply_word_dropout(target_table()->forward(tgt_in),  // (B, T, m)
                                               options.target_word_dropout(), is_training()));
  const std::unique_ptr<TrainingSteps> training = training_steps(state);
  std::vector<Tensor> outputs;
  outputs.reserve(static_cast<size_t>(tgt_in.size(1)));
  // unbind, not select per step: select's backward writes a zero (B, T, m) gradient per step.
  for (const Tensor& embedded_step : embedded.unbind(1)) {
    outputs.push_back(step(embedded_step, state, training.get()).first);
  }
  Tensor stacked = torch::stack(outputs, 1);
  // Bahdanau's readout does not feed back, so it runs once over all positions.
  return dropout(read_out(stacked, state));
}

Tensor RnnSeq2SeqImpl::output_layer(const Tensor& features) {
  OutputProjection projection = output_projection();
  return apply_linear(features, projection.weight, projection.bias);
}

EncoderDecoder::OutputProjection RnnSeq2SeqImpl::output_projection() {
  if (output_proj) return {output_proj->weight, output_proj->bias};
  return {target_table()->weight, Tensor()};
}

}  // namespace nmtzoo
