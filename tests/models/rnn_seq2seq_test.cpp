#include "models/rnn_seq2seq.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/models/model_fixtures.h"

namespace nmtzoo {
namespace {

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
      const at::Tensor final_annotations = torch::cat(
          {memory[b][length - 1].narrow(0, 0, n), memory[b][0].narrow(0, n, n)});
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

TEST(RnnSeq2Seq, AttentionRowsSumToOneAndIgnorePadding) {
  auto batch = testing::random_batch({6, 3}, {4, 4}, 10);
  torch::NoGradGuard no_grad;
  for (const std::string variant : {"rnn_bahdanau", "rnn_luong", "rnn_bahdanau_lstm"}) {
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

TEST(RnnSeq2Seq, TyingNeedsReadoutAsWideAsTheEmbedding) {
  EXPECT_THROW(RnnSeq2Seq(RnnSeq2SeqOptions(10, 10).emb_dim(8).readout_dim(6)
                              .sharing(EmbeddingSharing::kDecoder)),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
