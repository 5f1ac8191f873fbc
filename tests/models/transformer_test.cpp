// SPDX-License-Identifier: MIT
#include "libtorch/models/transformer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tests/models/model_fixtures.h"

namespace nmtzoo {
namespace {

TEST(Transformer, EncoderWithoutPositionsIsPermutationEquivariant) {
  torch::manual_seed(4);
  TransformerEncoder encoder(
      TransformerOptions(10, 10).d_model(16).heads(2).ffn_dim(32).encoder_layers(2).dropout(0));
  encoder->eval();
  auto x = torch::randn({2, 6, 16});
  auto permutation = torch::tensor({3, 0, 5, 1, 4, 2});
  auto no_padding = torch::zeros({2, 6}, torch::kBool);
  auto permuted_then_encoded = encoder->forward(x.index_select(1, permutation), no_padding);
  auto encoded_then_permuted = encoder->forward(x, no_padding).index_select(1, permutation);
  EXPECT_TRUE(torch::allclose(permuted_then_encoded, encoded_then_permuted, 1e-5, 1e-5));
}

TEST(Transformer, SinusoidsFollowThePaper) {
  PositionalEncoding positions(PositionalEncodingOptions(50, 8));
  auto table = positions->forward(50);
  for (int64_t pos : {0, 1, 7, 49}) {
    for (int64_t i = 0; i < 4; ++i) {
      double angle =
          static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(i) / 8.0);
      EXPECT_NEAR(table[pos][2 * i].item<double>(), std::sin(angle), 1e-6);
      EXPECT_NEAR(table[pos][2 * i + 1].item<double>(), std::cos(angle), 1e-6);
    }
  }
  EXPECT_TRUE(positions->forward(3, 7).equal(table.narrow(0, 7, 3)));
  EXPECT_THROW(positions->forward(3, 48), c10::Error);
}

TEST(Transformer, CrossAttentionPerLayerAndHeadIsRecorded) {
  auto model = testing::tiny_model("transformer_post");
  auto batch = testing::random_batch({5, 2}, {3, 3}, 8);
  torch::NoGradGuard no_grad;
  DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
  state.record_attention = true;
  model->decode_step(batch.tgt_in.select(1, 0), state);
  ASSERT_EQ(state.layer_attention.size(), 2u);
  EXPECT_EQ(state.layer_attention[0].sizes(), (std::vector<int64_t>{2, 2, 6}));
  EXPECT_TRUE(torch::allclose(state.attention.sum(-1), torch::ones({2})));
  auto padded = batch.src_pad_mask[1];
  EXPECT_EQ(state.attention[1].masked_select(padded).abs().max().item<float>(), 0.0f);
}

TEST(Transformer, TiedModelsHaveNoSeparateOutputMatrix) {
  auto names = [](const std::string& variant) {
    std::vector<std::string> keys;
    for (const auto& item : testing::tiny_model(variant)->named_parameters())
      keys.push_back(item.key());
    return keys;
  };
  auto shared_all = names("transformer_post");  // joint vocabulary, sharing auto = all
  EXPECT_EQ(std::count(shared_all.begin(), shared_all.end(), "tgt_embed.weight"), 0);
  EXPECT_EQ(std::count(shared_all.begin(), shared_all.end(), "output_proj.weight"), 0);
  auto untied = names("transformer_learned_gelu");  // share_embeddings: none
  EXPECT_EQ(std::count(untied.begin(), untied.end(), "tgt_embed.weight"), 1);
  EXPECT_EQ(std::count(untied.begin(), untied.end(), "output_proj.weight"), 1);
}

TEST(Transformer, PreNormHasFinalLayerNorms) {
  auto model = testing::tiny_model("transformer_pre");
  auto parameters = model->named_parameters();
  EXPECT_TRUE(parameters.contains("encoder.norm.weight"));
  EXPECT_TRUE(parameters.contains("decoder.norm.weight"));
  EXPECT_FALSE(
      testing::tiny_model("transformer_post")->named_parameters().contains("encoder.norm.weight"));
}

}  // namespace
}  // namespace nmtzoo
