// SPDX-License-Identifier: MIT
#include "libtorch/models/rnn_seq2seq.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/models/model_fixtures.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

constexpr const char* kGruGatesNode =
    "torch::autograd::CppNode<nmtzoo::(anonymous namespace)::GruGates>";

at::Tensor first_step(EncoderDecoder& model, const testing::TinyBatch& batch, DecoderState& state) {
  return model.decode_step(batch.tgt_in.select(1, 0), state);
}

TEST(RnnSeq2Seq, WithoutAttentionOnlyTheFinalEncoderStatesMatter) {
  auto batch = testing::random_batch({6, 4}, {3, 3}, 9);  // the second sentence is padded
  torch::NoGradGuard no_grad;
  for (const std::string variant : {"rnn_encdec", "rnn_bahdanau"}) {
    auto model = testing::tiny_model(variant);
    DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
    DecoderState perturbed = state;
    perturbed[kMemorySlot] = state[kMemorySlot] + torch::randn_like(state[kMemorySlot]);
    auto expected = first_step(*model, batch, state);
    auto actual = first_step(*model, batch, perturbed);
    if (variant == "rnn_bahdanau") {
      EXPECT_FALSE(torch::allclose(actual, expected)) << "attention reads every annotation";
      continue;
    }
    EXPECT_TRUE(actual.equal(expected)) << "no annotation but the final ones is read";
    // The context is [forward state after the last real word; backward state after the first
    // word] (Cho et al. 2014's summary), taken before padding, for every sentence.
    const int64_t n = dynamic_cast<RnnSeq2SeqImpl&>(*model).options.hidden_dim();
    const at::Tensor context = state["context"];
    const at::Tensor memory = state[kMemorySlot];
    for (int64_t b = 0; b < 2; ++b) {
      const int64_t length = batch.src_pad_mask[b].logical_not().sum().item<int64_t>();
      const at::Tensor final_annotations =
          torch::cat({memory[b][length - 1].narrow(0, 0, n), memory[b][0].narrow(0, n, n)});
      EXPECT_TRUE(torch::allclose(context[b], final_annotations, 1e-6, 1e-6)) << "sentence " << b;
    }
    // ... and it drives the decoder at every step: these two states differ in the context only.
    DecoderState reference = model->encode(batch.src_tokens, batch.src_pad_mask);
    DecoderState other_context = model->encode(batch.src_tokens, batch.src_pad_mask);
    other_context["context"] = context + torch::randn_like(context);
    EXPECT_FALSE(torch::allclose(first_step(*model, batch, other_context),
                                 first_step(*model, batch, reference)));
    for (const auto& name : reference.names()) {
      if (reference.kind(name) == SlotKind::kStep) other_context[name] = reference[name].clone();
    }
    EXPECT_FALSE(torch::allclose(model->decode_step(batch.tgt_in.select(1, 1), other_context),
                                 model->decode_step(batch.tgt_in.select(1, 1), reference)));
  }
}

TEST(RnnSeq2Seq, ContextProjectionsOnlyWhereRowsShareASentenceOrThereIsOne) {
  // Beam search's hypotheses share a sentence's projections, and one sentence's step products
  // would be matrix-vector ones; batched greedy decoding and training keep the context's products.
  testing::KernelSwitch kernels(true);
  auto model = testing::tiny_model("rnn_conditional");
  auto batch = testing::random_batch({6, 3}, {4, 4}, 11);
  torch::NoGradGuard no_grad;
  auto projected = [&](int64_t beam, int64_t sentences) {
    DecoderState state = model->encode(batch.src_tokens.narrow(0, 0, sentences),
                                       batch.src_pad_mask.narrow(0, 0, sentences));
    state.repeat_rows(beam);
    model->decode_step(batch.tgt_in.narrow(0, 0, sentences).select(1, 0).repeat_interleave(beam),
                       state);
    return state.contains("context_projections");
  };
  model->eval();
  EXPECT_TRUE(projected(3, 2)) << "beam search";
  EXPECT_TRUE(projected(1, 1)) << "one sentence";
  EXPECT_FALSE(projected(1, 2)) << "batched greedy";
  model->train();
  EXPECT_FALSE(projected(3, 2)) << "training";
}

TEST(RnnSeq2Seq, AttentionRowsSumToOneAndIgnorePadding) {
  auto batch = testing::random_batch({6, 3}, {4, 4}, 10);
  torch::NoGradGuard no_grad;
  for (const std::string variant : {"rnn_bahdanau", "rnn_luong", "rnn_bahdanau_lstm",
                                    "rnn_conditional", "rnn_conditional_lstm_2layers"}) {
    auto model = testing::tiny_model(variant);
    DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
    state.record_attention = true;
    for (int64_t t = 0; t < 3; ++t) {
      model->decode_step(batch.tgt_in.select(1, t), state);
      EXPECT_TRUE(torch::allclose(state.attention.sum(-1), torch::ones({2}))) << variant;
      EXPECT_EQ(state.attention.masked_select(batch.src_pad_mask).abs().sum().item<float>(), 0.0f)
          << variant;
    }
  }
}

TEST(RnnSeq2Seq, InitialStateComesFromTheBackwardEncoder) {
  auto model = testing::tiny_model("rnn_bahdanau");
  auto& rnn = dynamic_cast<RnnSeq2SeqImpl&>(*model);
  auto batch = testing::random_batch({5}, {2}, 11);
  torch::NoGradGuard no_grad;
  DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
  // The backward half of the first annotation is the backward RNN's final state.
  auto backward_first = state[kMemorySlot][0][0].narrow(0, 12, 12);
  auto expected = torch::tanh(rnn.init_proj->forward(backward_first.unsqueeze(0)));
  EXPECT_TRUE(torch::allclose(state["hidden"].view({1, -1}), expected, 1e-6, 1e-6));
}

// Sennrich et al. (2017): s'_i = GRU_1(E y_{i-1}, s_{i-1}); c_i = attention(s'_i, h);
// s_i = GRU_2(c_i, s'_i); the readout sees s_i, E y_{i-1} and c_i.
TEST(RnnSeq2Seq, ConditionalDecoderAttendsBetweenItsTwoCells) {
  auto model = testing::tiny_model("rnn_conditional");
  auto& rnn = dynamic_cast<RnnSeq2SeqImpl&>(*model);
  ASSERT_EQ(rnn.decoder_cells->size(), 2u);
  const int64_t n = rnn.options.hidden_dim();
  auto& first_cell = *rnn.decoder_cells->ptr<torch::nn::GRUCellImpl>(0);
  auto& second_cell = *rnn.decoder_cells->ptr<torch::nn::GRUCellImpl>(1);
  EXPECT_EQ(first_cell.weight_ih.size(1), rnn.options.emb_dim());
  EXPECT_EQ(second_cell.weight_ih.size(1), 2 * n);  // it reads the context only
  auto batch = testing::random_batch({5, 3}, {3, 3}, 12);
  torch::NoGradGuard no_grad;
  DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
  state.record_attention = true;
  const at::Tensor previous = state["hidden"].select(1, 0);
  const at::Tensor tokens = batch.tgt_in.select(1, 0);
  const at::Tensor intermediate = first_cell.forward(rnn.src_embed->forward(tokens), previous);
  auto [context, weights] = rnn.attention->forward(intermediate, state[kMemorySlot],
                                                   state[kMemoryPadMaskSlot], state["keys"]);
  const at::Tensor expected = second_cell.forward(context, intermediate);
  const at::Tensor log_probs = model->decode_step(tokens, state);
  EXPECT_TRUE(torch::allclose(state["hidden"].select(1, 0), expected, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(state.attention, weights, 1e-5, 1e-6));
  const at::Tensor readout_input =
      torch::cat({expected, rnn.src_embed->forward(tokens), context}, 1);
  const at::Tensor pre = rnn.readout->forward(readout_input).view({2, -1, 2});
  const at::Tensor logits = torch::matmul(std::get<0>(pre.max(-1)), rnn.src_embed->weight.t());
  EXPECT_TRUE(torch::allclose(log_probs, logits.log_softmax(-1), 1e-5, 1e-5));
}

TEST(RnnSeq2Seq, ConditionalQueryNeedsAttention) {
  EXPECT_THROW(RnnSeq2Seq(RnnSeq2SeqOptions(10, 10)
                              .attention(std::nullopt)
                              .attention_query(AttentionQuery::kConditional)),
               c10::Error);
}

TEST(RnnSeq2Seq, TyingNeedsReadoutAsWideAsTheEmbedding) {
  EXPECT_THROW(RnnSeq2Seq(RnnSeq2SeqOptions(10, 10).emb_dim(8).readout_dim(6).sharing(
                   EmbeddingSharing::kDecoder)),
               c10::Error);
}

// The encoder runs unpacked (LibTorch's packed RNN backward is quadratic in the length): its
// annotations, the decoder's initial state and every gradient equal those of LibTorch's packed
// bidirectional RNN on the module's own weights, for GRUs and LSTMs, one layer and two, sentences
// of several lengths (padding zero in the annotations, as pad_packed_sequence gives).
TEST(RnnSeq2Seq, TheEncoderEqualsLibTorchsPackedRnn) {
  namespace rnn_utils = torch::nn::utils::rnn;
  const auto batch = testing::random_batch({6, 1, 4, 9}, {3, 3, 3, 3}, 11);
  for (const std::string variant : {"rnn_bahdanau", "rnn_bahdanau_lstm", "rnn_bahdanau_2layers",
                                    "rnn_conditional_lstm_2layers"}) {
    SCOPED_TRACE(variant);
    auto model = testing::tiny_model(variant, 3);
    auto& rnn = dynamic_cast<RnnSeq2SeqImpl&>(*model);
    const at::Tensor upstream =
        torch::randn({4, batch.src_tokens.size(1), 2 * rnn.options.hidden_dim()});
    auto gradients = [&](const at::Tensor& memory, const at::Tensor& hidden) {
      rnn.zero_grad();
      ((memory * upstream).sum() + hidden.pow(2).sum()).backward();
      std::vector<at::Tensor> grads;
      for (const auto& p : rnn.parameters()) {
        if (p.grad().defined()) grads.push_back(p.grad().clone());
      }
      return grads;
    };
    DecoderState state = rnn.encode(batch.src_tokens, batch.src_pad_mask);
    const at::Tensor memory = state[kMemorySlot], hidden = state["hidden"];
    const auto grads = gradients(memory, hidden);

    const at::Tensor embedded = rnn.src_embed->forward(batch.src_tokens);
    const at::Tensor lengths = batch.src_pad_mask.logical_not().sum(1);
    auto packed = rnn_utils::pack_padded_sequence(embedded, lengths, true, false);
    at::Tensor out, finals;
    if (rnn.encoder_lstm) {
      auto [o, hc] = rnn.encoder_lstm->forward_with_packed_input(packed);
      out = std::get<0>(rnn_utils::pad_packed_sequence(o, true, 0.0, batch.src_tokens.size(1)));
      finals = std::get<0>(hc);
    } else {
      auto [o, h] = rnn.encoder_gru->forward_with_packed_input(packed);
      out = std::get<0>(rnn_utils::pad_packed_sequence(o, true, 0.0, batch.src_tokens.size(1)));
      finals = h;
    }
    const at::Tensor expected_hidden =
        torch::tanh(rnn.init_proj->forward(finals[finals.size(0) - 1])).view_as(hidden);
    EXPECT_TRUE(torch::allclose(memory, out, 1e-5, 1e-6)) << (memory - out).abs().max();
    EXPECT_TRUE(torch::allclose(hidden, expected_hidden, 1e-5, 1e-6));
    const auto expected_grads = gradients(out, expected_hidden);
    ASSERT_EQ(grads.size(), expected_grads.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      EXPECT_TRUE(torch::allclose(grads[i], expected_grads[i], 1e-4, 1e-5)) << "gradient " << i;
    }
  }
}

// A training forward pass runs the decoder's products as RecurrentLinears and its attention
// through TrainingStepContext (libtorch/kernels/deferred_gradients.h,
// libtorch/kernels/step_attention.h): every RNN of the zoo (GRU and LSTM, one and two layers,
// Bahdanau, Luong, conditional, without attention) gets the loss and every parameter's gradient of
// LibTorch's operators (the kernels off) on a padded batch, up to float32 rounding (dropout 0).
TEST(RnnSeq2Seq, TrainingLossAndGradientsAreAlikeWithTheKernelsOnAndOff) {
  const auto batch = testing::random_batch({5, 9, 3}, {7, 2, 8}, 4);
  for (const std::string& variant : testing::tiny_variants()) {
    if (variant.rfind("rnn", 0) != 0) continue;
    SCOPED_TRACE(variant);
    auto model = testing::tiny_model(variant, 5);
    model->train();
    auto inspect = [&](bool kernels) {
      return [&, kernels](const at::Tensor& loss) {
        const auto nodes = testing::graph_nodes(loss);
        EXPECT_EQ(nodes.count("nmtzoo::DeferredGradients") > 0, kernels);
        const bool attends = variant != "rnn_encdec";
        EXPECT_EQ(nodes.count("nmtzoo::TrainingStepContext") > 0, kernels && attends);
        const bool gru = variant.find("lstm") == std::string::npos;
        EXPECT_EQ(nodes.count(kGruGatesNode) > 0, kernels && gru);
      };
    };
    const auto on = testing::training_step(*model, batch, true, inspect(true));
    const auto off = testing::training_step(*model, batch, false, inspect(false));
    testing::expect_alike(on, off, 1e-4, 1e-5);
  }
}

// Under bf16 autocast the kernels, which take float32, stand aside: LibTorch's cells and attention.
TEST(RnnSeq2Seq, AutocastTrainingKeepsLibTorchsOperators) {
  testing::KernelSwitch on(true);
  const auto batch = testing::random_batch({5, 3}, {4, 2}, 6);
  auto model = testing::tiny_model("rnn_conditional", 7);
  model->train();
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  const at::Tensor logits = model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  const auto nodes = testing::graph_nodes(logits);
  EXPECT_EQ(nodes.count("nmtzoo::DeferredGradients"), 0u);
  EXPECT_EQ(nodes.count("nmtzoo::TrainingStepContext"), 0u);
  EXPECT_EQ(nodes.count(kGruGatesNode), 0u);
  logits.sum().backward();
}

}  // namespace
}  // namespace nmtzoo
