#include "models/multihead_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

namespace nmtzoo {
namespace {

TEST(MultiheadAttention, MatchesLibTorchsImplementation) {
  torch::manual_seed(3);
  MultiheadAttention ours(MultiheadAttentionOptions(8, 2));
  torch::nn::MultiheadAttention reference(torch::nn::MultiheadAttentionOptions(8, 2));
  {
    torch::NoGradGuard no_grad;
    reference->in_proj_weight.copy_(ours->in_proj_weight);
    reference->in_proj_bias.copy_(ours->in_proj_bias);
    reference->out_proj->weight.copy_(ours->out_proj->weight);
    reference->out_proj->bias.copy_(ours->out_proj->bias);
  }
  auto query = torch::randn({2, 3, 8});
  auto memory = torch::randn({2, 5, 8});
  auto pad = torch::tensor({false, false, false, true, true, false, false, false, false, false})
                 .view({2, 5});
  auto [out, weights] = ours->forward(query, memory, {}, pad, true);
  // LibTorch's module is sequence-first and averages weights over heads.
  auto [ref_out, ref_weights] = reference->forward(query.transpose(0, 1), memory.transpose(0, 1),
                                                   memory.transpose(0, 1), pad);
  EXPECT_TRUE(torch::allclose(out, ref_out.transpose(0, 1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(weights.mean(1), ref_weights, 1e-5, 1e-6));

  auto causal = causal_mask(3, torch::kCPU);
  auto [self_out, self_weights] = ours->forward(query, query, causal, {}, true);
  auto q = query.transpose(0, 1);
  // LibTorch 1.13's C++ module takes a float mask (-inf = forbidden).
  auto additive = torch::zeros({3, 3}).masked_fill(causal, -std::numeric_limits<float>::infinity());
  auto [ref_self, unused] = reference->forward(q, q, q, {}, true, additive);
  EXPECT_TRUE(torch::allclose(self_out, ref_self.transpose(0, 1), 1e-5, 1e-6))
      << (self_out - ref_self.transpose(0, 1)).abs().max();
}

TEST(MultiheadAttention, CausalMaskHidesTheFuture) {
  MultiheadAttention attention(MultiheadAttentionOptions(8, 4));
  auto x = torch::randn({2, 5, 8});
  auto [out, weights] = attention->forward(x, x, causal_mask(5, torch::kCPU), {}, true);
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, 4, 5, 5}));
  EXPECT_EQ(weights.triu(1).abs().max().item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({2, 4, 5})));
}

TEST(MultiheadAttention, FusedProjectionEqualsSeparateOnes) {
  MultiheadAttention attention(MultiheadAttentionOptions(8, 2));
  auto x = torch::randn({2, 3, 8});
  auto [q, k, v] = attention->project_qkv(x);
  auto [k2, v2] = attention->project_kv(x);
  EXPECT_TRUE(torch::allclose(q, attention->project_q(x), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(k, k2, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(v, v2, 1e-6, 1e-6));
}

TEST(MultiheadAttention, HeadsMustDivideTheSize) {
  EXPECT_THROW(MultiheadAttention(MultiheadAttentionOptions(10, 4)), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
