// SPDX-License-Identifier: MIT
#include "libtorch/kernels/fused_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <vector>

#include "libtorch/models/multihead_attention.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

constexpr const char* kLinearReluNode =
    "torch::autograd::CppNode<nmtzoo::(anonymous namespace)::LinearRelu>";

struct Case {
  int64_t batch, queries, keys, heads, dim;
  bool self;
  int64_t max_distance;  // 0: no relative positions
  bool causal, padding;
  double dropout;
};

// The leaves both paths differentiate: projections, relative tables, and the masks.
struct Inputs {
  torch::Tensor q_source, kv_source, relative_keys, relative_values, attn_mask, key_pad_mask,
      upstream;
};

Inputs inputs(const Case& c) {
  const int64_t e = c.heads * c.dim;
  Inputs in;
  in.q_source = torch::randn({c.batch, c.queries, c.self ? 3 * e : e});
  if (!c.self) in.kv_source = torch::randn({c.batch, c.keys, 2 * e});
  if (c.max_distance > 0) {
    in.relative_keys = torch::randn({2 * c.max_distance + 1, c.dim});
    in.relative_values = torch::randn({2 * c.max_distance + 1, c.dim});
  }
  if (c.causal) in.attn_mask = torch::ones({c.queries, c.keys}, torch::kBool).triu(1);
  if (c.padding) {
    // Sentence b has keys - b real positions (at least one): its last b are padding.
    in.key_pad_mask = torch::zeros({c.batch, c.keys}, torch::kBool);
    for (int64_t b = 0; b < c.batch; ++b) {
      in.key_pad_mask[b]
          .narrow(0, c.keys - std::min(b, c.keys - 1), std::min(b, c.keys - 1))
          .fill_(true);
    }
  }
  in.upstream = torch::randn({c.batch, c.queries, e});
  return in;
}

struct Outcome {
  torch::Tensor out;
  std::vector<torch::Tensor>
      grads;  // q_source, kv_source, relative keys, relative values (as defined)
};

// The fused kernel, or the composition (scaled_dot_product_attention on the heads split from the
// projections, as MultiheadAttention ran it before the kernel) in `dtype`; both from seed 42.
Outcome run(const Case& c, const Inputs& in, bool fused, at::ScalarType dtype = at::kFloat) {
  auto leaf = [&](const torch::Tensor& t) {
    return t.defined() ? t.detach().to(dtype).requires_grad_() : torch::Tensor();
  };
  std::vector<torch::Tensor> leaves{leaf(in.q_source), leaf(in.kv_source), leaf(in.relative_keys),
                                    leaf(in.relative_values)};
  const int64_t e = c.heads * c.dim;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));
  torch::manual_seed(42);
  torch::Tensor out;
  if (fused) {
    FusedAttentionOptions options;
    options.heads = c.heads;
    options.scale = scale;
    options.dropout = c.dropout;
    options.attn_mask = in.attn_mask;
    options.key_pad_mask = in.key_pad_mask;
    options.relative_keys = leaves[2];
    options.relative_values = leaves[3];
    options.max_distance = c.max_distance;
    EXPECT_TRUE(fused_attention_applies(leaves[0], leaves[1], options));
    out = fused_attention(leaves[0], leaves[1], options);
  } else {
    const torch::Tensor& kv = c.self ? leaves[0] : leaves[1];
    const int64_t kv_first = c.self ? e : 0;
    auto heads = [&](const torch::Tensor& rows, int64_t first) {
      return rows.narrow(2, first, e).view({c.batch, rows.size(1), c.heads, c.dim}).transpose(1, 2);
    };
    std::optional<RelativePositions> relative;
    if (c.max_distance > 0) {
      relative = RelativePositions{
          leaves[2], leaves[3],
          relative_position_index(c.queries, c.keys, 0, c.max_distance, torch::kCPU)};
    }
    auto [merged, weights] = scaled_dot_product_attention(
        heads(leaves[0], 0) * scale, heads(kv, kv_first), heads(kv, kv_first + e), in.attn_mask,
        in.key_pad_mask, c.dropout, c.dropout > 0, false, relative ? &*relative : nullptr);
    out = merged.transpose(1, 2).reshape({c.batch, c.queries, e});
  }
  (out * in.upstream.to(dtype)).sum().backward();
  Outcome outcome{out.detach().to(at::kDouble), {}};
  for (const auto& l : leaves) {
    if (l.defined()) outcome.grads.push_back(l.grad().to(at::kDouble));
  }
  return outcome;
}

void expect_same(const Outcome& fused, const Outcome& reference, double tolerance) {
  EXPECT_TRUE(torch::allclose(fused.out, reference.out, tolerance, tolerance))
      << "output: " << (fused.out - reference.out).abs().max();
  ASSERT_EQ(fused.grads.size(), reference.grads.size());
  for (size_t i = 0; i < fused.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused.grads[i], reference.grads[i], tolerance, tolerance))
        << "gradient " << i << ": " << (fused.grads[i] - reference.grads[i]).abs().max();
  }
}

// Odd sizes, each mask alone and together, relative positions clipped inside and beyond the
// lengths, self and cross attention: values and every gradient against the composition in
// float64, on one thread and two.
TEST(FusedAttention, EqualsTheCompositionInFloat64WithMasksPaddingAndRelativePositions) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  const std::vector<Case> cases{
      {3, 7, 7, 2, 5, true, 0, false, false, 0.0},  {3, 7, 7, 2, 5, true, 0, true, true, 0.0},
      {4, 9, 9, 3, 8, true, 2, true, false, 0.0},   {2, 5, 5, 1, 16, true, 16, false, true, 0.0},
      {3, 6, 11, 2, 7, false, 0, false, true, 0.0}, {1, 1, 1, 1, 1, true, 1, true, false, 0.0},
      {5, 3, 4, 4, 3, false, 0, false, false, 0.0}, {2, 6, 11, 2, 7, false, 3, false, true, 0.0},
      {2, 11, 6, 2, 7, false, 3, false, true, 0.0}};
  torch::manual_seed(1);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << "threads " << threads << ", B " << c.batch << " T " << c.queries << " S "
                   << c.keys << " H " << c.heads << " D " << c.dim << " K " << c.max_distance);
      const Inputs in = inputs(c);
      expect_same(run(c, in, true), run(c, in, false, at::kDouble), 2e-5);
    }
  }
}

// With dropout the kernel drops exactly what chunked_dropout drops on the composition's weights
// from the same generator state, so both paths train alike from one seed: equal up to float32
// rounding, on one thread and two, across the 4,096-element streams of the generator.
TEST(FusedAttention, DropsWhatTheCompositionDropsFromTheSameSeed) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  const std::vector<Case> cases{{3, 7, 7, 2, 5, true, 2, true, true, 0.3},
                                {6, 23, 31, 4, 8, false, 0, false, true, 0.1}};
  torch::manual_seed(2);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (const Case& c : cases) {
      const Inputs in = inputs(c);
      const Outcome fused = run(c, in, true);
      expect_same(fused, run(c, in, false), 2e-5);
      // Dropout did drop: the output differs from the kernel's own without dropout.
      Case without = c;
      without.dropout = 0.0;
      EXPECT_FALSE(torch::allclose(fused.out, run(without, in, true).out, 1e-3, 1e-3));
    }
  }
}

TEST(FusedAttention, AQueryWithAllKeysMaskedGetsZeroInsteadOfNaN) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  const Case c{2, 3, 3, 1, 4, false, 0, false, true, 0.0};
  Inputs in = inputs(c);
  in.key_pad_mask[1].fill_(true);
  const Outcome fused = run(c, in, true);
  EXPECT_TRUE(torch::isfinite(fused.out).all().item<bool>());
  EXPECT_EQ(fused.out[1].abs().max().item<double>(), 0.0);
  for (const auto& grad : fused.grads) EXPECT_TRUE(torch::isfinite(grad).all().item<bool>());
}

TEST(FusedAttention, AppliesOnlyToWhatItComputes) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  FusedAttentionOptions options;
  options.heads = 2;
  const torch::Tensor qkv = torch::randn({2, 3, 12});
  EXPECT_TRUE(fused_attention_applies(qkv, {}, options));
  EXPECT_FALSE(fused_attention_applies(qkv.to(torch::kBFloat16), {}, options));
  EXPECT_FALSE(fused_attention_applies(qkv.transpose(0, 1), {}, options));       // not contiguous
  EXPECT_FALSE(fused_attention_applies(torch::randn({2, 3, 13}), {}, options));  // not 3E
  EXPECT_FALSE(fused_attention_applies(torch::randn({2, 3, 4}), torch::randn({2, 5, 6}),
                                       options));  // kv not 2E
  EXPECT_TRUE(fused_attention_applies(torch::randn({2, 3, 4}), torch::randn({2, 5, 8}), options));
  options.key_pad_mask = torch::zeros({2, 4}, torch::kBool);  // S is 3
  EXPECT_FALSE(fused_attention_applies(qkv, {}, options));
  options.key_pad_mask = torch::zeros({2, 3}, torch::kBool);
  options.relative_keys = torch::randn({5, 2});
  EXPECT_FALSE(fused_attention_applies(qkv, {}, options));  // values missing
  options.relative_values = torch::randn({5, 2});
  options.max_distance = 2;
  EXPECT_TRUE(fused_attention_applies(qkv, {}, options));
  options.dropout = 1.0;
  EXPECT_FALSE(fused_attention_applies(qkv, {}, options));
  options.dropout = 0.1;
  testing::KernelSwitch off(false);
  EXPECT_FALSE(fused_attention_applies(qkv, {}, options));
}

// The module takes the kernel in training and evaluation alike, and with the kernels off takes
// the composition: same outputs and parameter gradients (no dropout here).
TEST(FusedAttention, MultiheadAttentionTrainsAlikeWithTheKernelsOnAndOff) {
  torch::manual_seed(3);
  MultiheadAttention attention(
      MultiheadAttentionOptions(12, 3).self_attention(true).max_relative_positions(3));
  const torch::Tensor x = torch::randn({3, 6, 12});
  const torch::Tensor memory = torch::randn({3, 4, 12});
  const torch::Tensor causal = torch::ones({6, 6}, torch::kBool).triu(1);
  const torch::Tensor pad = torch::zeros({3, 4}, torch::kBool).index_put_({2, 3}, true);
  auto outcome = [&](bool kernels) {
    testing::KernelSwitch kernel_switch(kernels);
    attention->zero_grad();
    torch::Tensor self = std::get<0>(attention->forward(x, x, causal));
    (self.sin().sum()).backward();
    std::vector<torch::Tensor> result{self.detach()};
    for (const auto& p : attention->parameters()) result.push_back(p.grad().clone());
    return result;
  };
  const int64_t calls = fused_attention_calls();
  const auto on = outcome(true);
  EXPECT_EQ(fused_attention_calls(), calls + 1);
  const auto off = outcome(false);
  EXPECT_EQ(fused_attention_calls(), calls + 1);
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < on.size(); ++i)
    EXPECT_TRUE(torch::allclose(on[i], off[i], 1e-5, 1e-5)) << "tensor " << i;

  MultiheadAttention cross(MultiheadAttentionOptions(12, 3));
  cross->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor fused = std::get<0>(cross->forward(x, memory, {}, pad));
  testing::KernelSwitch off_switch(false);
  EXPECT_TRUE(torch::allclose(fused, std::get<0>(cross->forward(x, memory, {}, pad)), 1e-5, 1e-5));
}

// A whole Transformer's training step on a padded batch, every Transformer variant of the zoo
// (post- and pre-norm, relative positions, GELU): loss and every parameter's gradient alike with
// the kernels on and off (dropout 0, so the fused residual steps only round differently).
TEST(FusedAttention, ATransformersLossAndGradientsAreAlikeWithTheKernelsOnAndOff) {
  const auto batch = testing::random_batch({5, 9, 3}, {7, 2, 8}, 4);
  for (const std::string& variant : testing::tiny_variants()) {
    if (variant.rfind("transformer", 0) != 0) continue;
    SCOPED_TRACE(variant);
    auto model = testing::tiny_model(variant, 5);
    model->train();
    // The feed-forward's first layer and its ReLU as libtorch/kernels/linear_relu.h's node where it
    // is a ReLU.
    const bool relu = variant.find("gelu") == std::string::npos;
    auto inspect = [&](bool kernels) {
      return [&, kernels](const at::Tensor& loss) {
        EXPECT_EQ(testing::graph_nodes(loss).count(kLinearReluNode) > 0, kernels && relu);
      };
    };
    const int64_t calls = fused_attention_calls();
    const auto on = testing::training_step(*model, batch, true, inspect(true));
    const int64_t fused = fused_attention_calls() - calls;
    EXPECT_EQ(fused, 6)
        << "2 encoder layers' self-attention, 2 decoder layers' self- and cross attention";
    const auto off = testing::training_step(*model, batch, false, inspect(false));
    EXPECT_EQ(fused_attention_calls() - calls, fused);
    testing::expect_alike(on, off, 1e-4, 1e-5);
  }
}

}  // namespace
}  // namespace nmtzoo
