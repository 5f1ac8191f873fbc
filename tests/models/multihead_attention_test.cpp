// SPDX-License-Identifier: MIT
#include "libtorch/models/multihead_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <vector>

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

// The projections' gradients: the fused projection's heads get their own backward (one copy
// into the projection's layout); it must give what the heads as views of one linear give,
// also when some heads receive no gradient.
TEST(MultiheadAttention, FusedProjectionsGradientsEqualThoseOfViews) {
  torch::manual_seed(4);
  MultiheadAttention attention(MultiheadAttentionOptions(12, 3));
  auto x = torch::randn({2, 5, 12});
  auto views = [&](const torch::Tensor& projected, int64_t parts) {
    return projected.view({2, 5, parts, 3, 4}).permute({2, 0, 3, 1, 4});
  };
  auto weights = torch::randn({3, 2, 3, 5, 4});
  auto gradients = [&](bool ours, bool all_parts, bool memory) {
    attention->zero_grad();
    const int64_t parts = memory ? 2 : 3;
    std::vector<torch::Tensor> heads;
    if (ours && memory) {
      auto [k, v] = attention->project_kv(x);
      heads = {k, v};
    } else if (ours) {
      auto [q, k, v] = attention->project_qkv(x);
      heads = {q * 2.0, k, v};  // undo the query's scale 1 / sqrt(4)
    } else {
      const int64_t e = 12;
      const int64_t first = memory ? e : 0;
      auto split = views(
          torch::nn::functional::linear(x, attention->in_proj_weight.narrow(0, first, parts * e),
                                        attention->in_proj_bias.narrow(0, first, parts * e)),
          parts);
      for (int64_t i = 0; i < parts; ++i) heads.push_back(split[i]);
    }
    torch::Tensor loss = torch::zeros({});
    for (size_t i = 0; i < heads.size(); ++i) {
      if (all_parts || i == 1) loss = loss + (heads[i] * weights[static_cast<int64_t>(i)]).sum();
    }
    loss.backward();
    return std::make_pair(attention->in_proj_weight.grad().clone(),
                          attention->in_proj_bias.grad().clone());
  };
  for (bool memory : {false, true}) {
    for (bool all_parts : {true, false}) {
      auto [w, b] = gradients(true, all_parts, memory);
      auto [ref_w, ref_b] = gradients(false, all_parts, memory);
      EXPECT_TRUE(torch::allclose(w, ref_w, 1e-5, 1e-6))
          << memory << all_parts << (w - ref_w).abs().max();
      EXPECT_TRUE(torch::allclose(b, ref_b, 1e-5, 1e-6)) << memory << all_parts;
    }
  }
}

TEST(MultiheadAttention, RelativePositionRowsAreClippedDistancesFromTheQuery) {
  // Queries at positions 2 and 3 (after two cached keys) over keys 0..3, clip 1: rows K + d.
  auto index = relative_position_index(2, 4, 2, 1, torch::kCPU);
  EXPECT_TRUE(index.equal(torch::tensor({0, 0, 1, 2, 0, 0, 0, 1}, torch::kLong).view({2, 4})))
      << index;
}

// Shaw et al. (2018), equations 3-5, one query-key pair at a time.
Tensor shaw_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& keys,
                      const Tensor& values, int64_t clip, const Tensor& causal) {
  const int64_t b = q.size(0), h = q.size(1), t = q.size(2), s = k.size(2);
  Tensor out = torch::zeros_like(q);
  for (int64_t n = 0; n < b; ++n) {
    for (int64_t head = 0; head < h; ++head) {
      for (int64_t i = 0; i < t; ++i) {
        std::vector<Tensor> scores;
        for (int64_t j = 0; j < s; ++j) {
          const int64_t row = std::clamp<int64_t>(j - i, -clip, clip) + clip;
          Tensor score = q[n][head][i].dot(k[n][head][j] + keys[row]);
          if (causal[i][j].item<bool>()) score = torch::full({}, -1e9);
          scores.push_back(score);
        }
        Tensor alpha = torch::stack(scores).softmax(0);
        for (int64_t j = 0; j < s; ++j) {
          const int64_t row = std::clamp<int64_t>(j - i, -clip, clip) + clip;
          out[n][head][i] += alpha[j] * (v[n][head][j] + values[row]);
        }
      }
    }
  }
  return out;
}

TEST(MultiheadAttention, RelativePositionsFollowShawEtAl) {
  torch::manual_seed(5);
  const int64_t clip = 2;
  MultiheadAttention attention(MultiheadAttentionOptions(8, 2).max_relative_positions(clip));
  ASSERT_EQ(attention->relative_keys.sizes(), (std::vector<int64_t>{5, 4}));
  auto x = torch::randn({2, 6, 8});
  auto causal = causal_mask(6, torch::kCPU);
  auto [q, k, v] = attention->project_qkv(x);
  const RelativePositions relative{attention->relative_keys, attention->relative_values,
                                   relative_position_index(6, 6, 0, clip, torch::kCPU)};
  auto [ours, unused] =
      scaled_dot_product_attention(q, k, v, causal, {}, 0.0, false, false, &relative);
  auto expected =
      shaw_attention(q, k, v, attention->relative_keys, attention->relative_values, clip, causal);
  EXPECT_TRUE(torch::allclose(ours, expected, 1e-5, 1e-6)) << (ours - expected).abs().max();

  // The module's own path, queried for the last 2 positions over all 6 keys, gives the same rows.
  auto [whole, w1] = attention->attend(q, k, v, causal, {}, false);
  auto [last, w2] = attention->attend(q.narrow(2, 4, 2), k, v, causal.narrow(0, 4, 2), {}, false,
                                      /*query_offset=*/4);
  EXPECT_TRUE(torch::allclose(last, whole.narrow(1, 4, 2), 1e-5, 1e-6));
}

TEST(MultiheadAttention, HeadsMustDivideTheSize) {
  EXPECT_THROW(MultiheadAttention(MultiheadAttentionOptions(10, 4)), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
