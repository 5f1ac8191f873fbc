// SPDX-License-Identifier: MIT
#include "libtorch/search/ensemble.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/models/transformer.h"
#include "libtorch/search/search.h"
#include "tests/models/model_fixtures.h"
#include "torch_free/archs/options/transformer_options.h"

namespace nmtzoo {
namespace {

TEST(Ensemble, OfOneModelGivesExactlyTheModelsOutput) {
  for (const auto& variant : testing::tiny_variants()) {
    auto model = testing::tiny_model(variant);
    EnsembleModel ensemble({model});
    auto batch = testing::random_batch({5, 2, 7}, {1, 1, 1}, 31);
    for (int64_t beam : {1, 3}) {
      SearchOptions options;
      options.beam = beam;
      options.nbest = beam;
      options.max_len_b = 8;
      options.record_attention = variant != "rnn_encdec";
      auto alone = beam_search(*model, batch.src_tokens, batch.src_pad_mask, options);
      auto together = beam_search(ensemble, batch.src_tokens, batch.src_pad_mask, options);
      for (size_t b = 0; b < alone.size(); ++b) {
        ASSERT_EQ(alone[b].size(), together[b].size()) << variant;
        for (size_t k = 0; k < alone[b].size(); ++k) {
          EXPECT_EQ(together[b][k].tokens, alone[b][k].tokens) << variant << " beam " << beam;
          EXPECT_EQ(together[b][k].score, alone[b][k].score) << variant << " beam " << beam;
          if (options.record_attention) {
            EXPECT_TRUE(together[b][k].attention.equal(alone[b][k].attention)) << variant;
          }
        }
      }
    }
  }
}

TEST(Ensemble, CombinesProbabilitiesOrLogProbabilitiesOfEachModelsOwnState) {
  // A Transformer with an RNN: each keeps its own state inside the ensemble's.
  auto transformer = testing::tiny_model("transformer_post");
  auto rnn = testing::tiny_model("rnn_bahdanau");
  auto batch = testing::random_batch({5, 3}, {2, 2}, 32);
  torch::NoGradGuard no_grad;
  auto step_of = [&](EncoderDecoder& model) {
    DecoderState state = model.encode(batch.src_tokens, batch.src_pad_mask);
    model.decode_step(batch.tgt_in.select(1, 0), state);
    return model.decode_step(batch.tgt_in.select(1, 1), state);
  };
  const at::Tensor a = step_of(*transformer);
  const at::Tensor b = step_of(*rnn);
  EnsembleModel by_prob({transformer, rnn}, {0.25, 0.75}, EnsembleMode::kProb);
  EXPECT_TRUE(
      torch::allclose(step_of(by_prob), (0.25 * a.exp() + 0.75 * b.exp()).log(), 1e-5, 1e-5));
  EnsembleModel by_log_prob({transformer, rnn}, {0.25, 0.75}, EnsembleMode::kLogProb);
  EXPECT_TRUE(torch::allclose(step_of(by_log_prob), 0.25 * a + 0.75 * b, 1e-5, 1e-5));
  // Teacher forcing gives the same combination at every position.
  at::Tensor forced = by_prob.forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  EXPECT_TRUE(torch::allclose(forced.select(1, 1), step_of(by_prob), 1e-5, 1e-5));
  // Beam search over the mixed ensemble runs through the one search.
  SearchOptions options;
  options.beam = 3;
  auto results = beam_search(by_prob, batch.src_tokens, batch.src_pad_mask, options);
  EXPECT_EQ(results.size(), 2u);
}

TEST(Ensemble, RefusesModelsWithDifferentTargetVocabularies) {
  auto tiny = [](int64_t tgt_vocab) {
    return Transformer(TransformerOptions(23, tgt_vocab)
                           .d_model(8)
                           .heads(2)
                           .ffn_dim(16)
                           .encoder_layers(1)
                           .decoder_layers(1))
        .ptr();
  };
  auto small = tiny(23);
  auto large = tiny(30);
  EnsembleModel ensemble({small, large});
  auto batch = testing::random_batch({4}, {2}, 33);
  torch::NoGradGuard no_grad;
  DecoderState state = ensemble.encode(batch.src_tokens, batch.src_pad_mask);
  try {
    ensemble.decode_step(batch.tgt_in.select(1, 0), state);
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("disagree on the target vocabulary"), std::string::npos);
  }
  EXPECT_THROW(EnsembleModel({small}, {0.5, 0.5}), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
