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
  auto batch = testing::random_batch({6, 4}, {3, 3}, 9);
  torch::NoGradGuard no_grad;
  for (const std::string variant : {"rnn_encdec", "rnn_bahdanau"}) {
    auto model = testing::tiny_model(variant);
    DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
    DecoderState perturbed = state;
    perturbed.memory = state.memory + torch::randn_like(state.memory);
    auto expected = first_step(*model, batch, state);
    auto actual = first_step(*model, batch, perturbed);
    if (variant == "rnn_encdec") {
      EXPECT_TRUE(actual.equal(expected)) << "the context is the final states only";
    } else {
      EXPECT_FALSE(torch::allclose(actual, expected)) << "attention reads every annotation";
    }
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
  auto backward_first = state.memory[0][0].narrow(0, 12, 12);
  auto expected = torch::tanh(rnn.init_proj->forward(backward_first.unsqueeze(0)));
  EXPECT_TRUE(torch::allclose(state.cache[0].view({1, -1}), expected, 1e-6, 1e-6));
}

TEST(RnnSeq2Seq, TyingNeedsReadoutAsWideAsTheEmbedding) {
  EXPECT_THROW(RnnSeq2Seq(RnnSeq2SeqOptions(10, 10).emb_dim(8).readout_dim(6)
                              .sharing(EmbeddingSharing::kDecoder)),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
