// SPDX-License-Identifier: MIT
#include "libtorch/kernels/step_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

using torch::indexing::Slice;

// The composition the kernel replaces, in float64: gather the rows, scores, relative terms, mask,
// softmax, weighted sum.
torch::Tensor composed(const torch::Tensor& q, const torch::Tensor& keys,
                       const torch::Tensor& values, const torch::Tensor& key_rows,
                       const torch::Tensor& value_rows, const torch::Tensor& mask,
                       const StepRelativePositions* relative) {
  torch::Tensor k = (key_rows.defined() ? keys.index_select(0, key_rows) : keys).to(torch::kDouble);
  torch::Tensor v =
      (value_rows.defined() ? values.index_select(0, value_rows) : values).to(torch::kDouble);
  torch::Tensor q64 = q.to(torch::kDouble);
  torch::Tensor scores = torch::matmul(q64, k.transpose(-2, -1));  // (B, H, 1, S)
  torch::Tensor index;
  if (relative != nullptr) {
    const int64_t r = relative->max_distance;
    index = (torch::arange(k.size(2)) - relative->query_offset).clamp(-r, r) + r;
    scores =
        scores + torch::matmul(q64, relative->keys.to(torch::kDouble).t()).index_select(-1, index);
  }
  if (mask.defined()) {
    scores = scores.masked_fill(mask.view({mask.size(0), 1, 1, mask.size(1)}),
                                -std::numeric_limits<double>::infinity());
  }
  torch::Tensor weights = scores.softmax(-1);
  torch::Tensor out = torch::matmul(weights, v);
  if (relative != nullptr) {
    torch::Tensor table_weights =
        torch::zeros({q.size(0), q.size(1), 1, relative->keys.size(0)}, torch::kDouble)
            .index_add_(-1, index, weights);
    out = out + torch::matmul(table_weights, relative->values.to(torch::kDouble));
  }
  return out;
}

void expect_as_composed(const torch::Tensor& q, const torch::Tensor& keys,
                        const torch::Tensor& values, const torch::Tensor& key_rows,
                        const torch::Tensor& value_rows, const torch::Tensor& mask,
                        const StepRelativePositions* relative = nullptr) {
  ASSERT_TRUE(step_attention_applies(q, keys, values, key_rows, value_rows, mask));
  torch::Tensor out = step_attention(q, keys, values, key_rows, value_rows, mask, relative);
  torch::Tensor expected = composed(q, keys, values, key_rows, value_rows, mask, relative);
  ASSERT_EQ(out.sizes(), expected.sizes());
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_TRUE(torch::allclose(out.to(torch::kDouble), expected, 1e-5, 1e-5))
      << (out.to(torch::kDouble) - expected).abs().max();
}

// Keys and values as the projection leaves them: (B, H, S, D) views of one (B, S, 2, H, D) tensor.
std::pair<torch::Tensor, torch::Tensor> projected_keys_values(int64_t batch, int64_t heads,
                                                              int64_t positions, int64_t dim) {
  torch::Tensor kv = torch::randn({batch, positions, 2, heads, dim}).permute({2, 0, 3, 1, 4});
  return {kv[0], kv[1]};
}

TEST(StepAttention, EqualsTheCompositionOverOddSizesAndThreads) {
  testing::KernelSwitch on(true);
  torch::manual_seed(5);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (int64_t dim : {1, 7, 64, 65}) {
      for (int64_t positions : {1, 3, 37}) {
        const int64_t batch = 11, heads = 3;
        torch::Tensor q = torch::randn({batch, heads, 1, dim});
        auto [keys, values] = projected_keys_values(batch, heads, positions, dim);
        // Padding at the end of some rows, never a whole row.
        torch::Tensor mask =
            torch::arange(positions).unsqueeze(0) >= torch::randint(1, positions + 1, {batch, 1});
        expect_as_composed(q, keys, values, {}, {}, mask);
        expect_as_composed(q, keys.contiguous(), values.contiguous(), {}, {}, {});
      }
    }
  }
}

TEST(StepAttention, ReadsKeysAndValuesThroughRowIndices) {
  // Beam search's source keys: 4 sentences, 5 hypotheses each reading their sentence's row, then
  // a reorder that drops a sentence and permutes hypotheses.
  testing::KernelSwitch on(true);
  torch::manual_seed(6);
  const int64_t sentences = 4, beam = 5, heads = 2, positions = 9, dim = 16;
  auto [keys, values] = projected_keys_values(sentences, heads, positions, dim);
  torch::Tensor rows = torch::arange(sentences).repeat_interleave(beam);
  torch::Tensor source_mask =
      torch::arange(positions).unsqueeze(0) >= torch::tensor({9, 4, 1, 6}).unsqueeze(1);
  torch::Tensor q = torch::randn({sentences * beam, heads, 1, dim});
  expect_as_composed(q, keys, values, rows, rows, source_mask.index_select(0, rows));
  torch::Tensor reordered =
      rows.index_select(0, torch::tensor({0, 0, 3, 1, 2, 10, 11, 11, 13, 14, 19, 15, 15, 16, 18}));
  torch::Tensor q2 = torch::randn({reordered.size(0), heads, 1, dim});
  expect_as_composed(q2, keys, values, reordered, reordered,
                     source_mask.index_select(0, reordered));
  // Keys and values gathered by different indices (one of them already gathered).
  expect_as_composed(q2, keys.index_select(0, reordered), values, {}, reordered, {});
}

TEST(StepAttention, AddsRelativePositionTerms) {
  testing::KernelSwitch on(true);
  torch::manual_seed(7);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    const int64_t batch = 6, heads = 4, dim = 8;
    for (int64_t max_distance : {0, 2, 16}) {
      for (int64_t positions : {1, 5, 40}) {
        torch::Tensor q = torch::randn({batch, heads, 1, dim});
        torch::Tensor keys = torch::randn({batch, heads, positions, dim});
        torch::Tensor values = torch::randn({batch, heads, positions, dim});
        StepRelativePositions relative{torch::randn({2 * max_distance + 1, dim}),
                                       torch::randn({2 * max_distance + 1, dim}), max_distance,
                                       positions - 1};
        expect_as_composed(q, keys, values, {}, {}, {}, &relative);
        relative.query_offset = 2;  // a query before some of its keys
        expect_as_composed(q, keys, values, {}, {}, {}, &relative);
      }
    }
  }
}

TEST(StepAttention, AFullyMaskedRowIsNaNAsTheSoftmaxMakesIt) {
  testing::KernelSwitch on(true);
  torch::Tensor q = torch::randn({2, 1, 1, 4});
  torch::Tensor keys = torch::randn({2, 1, 3, 4});
  torch::Tensor mask =
      torch::tensor({false, false, true, true, true, true}, torch::kBool).view({2, 3});
  torch::Tensor out = step_attention(q, keys, keys, {}, {}, mask);
  torch::Tensor expected = composed(q, keys, keys, {}, {}, mask, nullptr);
  EXPECT_TRUE(expected[1].isnan().all().item<bool>());
  EXPECT_TRUE(out[1].isnan().all().item<bool>());
  EXPECT_TRUE(torch::allclose(out[0].to(torch::kDouble), expected[0], 1e-5, 1e-6));
}

TEST(StepAttention, LeavesOtherOperandsToTheComposition) {
  testing::KernelSwitch on(true);
  torch::Tensor q = torch::randn({2, 1, 1, 4});
  torch::Tensor keys = torch::randn({2, 1, 3, 4});
  EXPECT_TRUE(step_attention_applies(q, keys, keys, {}, {}, {}));
  EXPECT_FALSE(
      step_attention_applies(torch::randn({2, 1, 2, 4}), keys, keys, {}, {}, {}));  // two queries
  EXPECT_FALSE(step_attention_applies(q.to(torch::kBFloat16), keys, keys, {}, {}, {}));
  EXPECT_FALSE(step_attention_applies(q.requires_grad_(), keys, keys, {}, {}, {}));
  q = q.detach();
  EXPECT_FALSE(
      step_attention_applies(q, keys.transpose(2, 3), keys, {}, {}, {}));  // rows of D strided
  EXPECT_FALSE(
      step_attention_applies(q, keys, keys, torch::tensor({0}), {}, {}));  // rows for 1 of 2
  EXPECT_FALSE(step_attention_applies(q, keys, keys, {}, {}, torch::zeros({2, 4}, torch::kBool)));
  EXPECT_FALSE(step_attention_applies(q, keys, keys, {}, {}, torch::zeros({2, 3})));  // not bool
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(step_attention_applies(q.clone().requires_grad_(), keys, keys, {}, {}, {}));
  }
  {
    testing::KernelSwitch off(false);
    EXPECT_FALSE(step_attention_applies(q, keys, keys, {}, {}, {}));
  }
  EXPECT_THROW(step_attention(q, keys, keys, torch::tensor({0, 2}), {}, {}),
               c10::Error);  // row 2 of 2
  StepRelativePositions wrong_table{torch::randn({3, 5}), torch::randn({3, 5}), 1, 0};
  EXPECT_THROW(step_attention(q, keys, keys, {}, {}, {}, &wrong_table), c10::Error);
}

// step_context's composition in float64.
std::pair<torch::Tensor, torch::Tensor> composed_context(
    const torch::Tensor& query, const torch::Tensor& keys, const torch::Tensor& energy,
    double scale, const torch::Tensor& memory, const torch::Tensor& key_rows,
    const torch::Tensor& memory_rows, const torch::Tensor& mask) {
  torch::Tensor k = (key_rows.defined() ? keys.index_select(0, key_rows) : keys).to(torch::kDouble);
  torch::Tensor m =
      (memory_rows.defined() ? memory.index_select(0, memory_rows) : memory).to(torch::kDouble);
  torch::Tensor q = query.to(torch::kDouble).unsqueeze(1);  // (B, 1, A)
  torch::Tensor scores = energy.defined()
                             ? torch::matmul(torch::tanh(q + k), energy.to(torch::kDouble))
                             : (k * q).sum(-1) * scale;  // (B, S)
  if (mask.defined()) scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
  torch::Tensor weights = scores.softmax(-1);
  return {torch::matmul(weights.unsqueeze(1), m).squeeze(1), weights};
}

void expect_context_as_composed(const torch::Tensor& query, const torch::Tensor& keys,
                                const torch::Tensor& energy, double scale,
                                const torch::Tensor& memory, const torch::Tensor& key_rows,
                                const torch::Tensor& memory_rows, const torch::Tensor& mask) {
  ASSERT_TRUE(step_context_applies(query, keys, energy, memory, key_rows, memory_rows, mask));
  auto [context, weights] =
      step_context(query, keys, energy, scale, memory, key_rows, memory_rows, mask);
  auto [expected_context, expected_weights] =
      composed_context(query, keys, energy, scale, memory, key_rows, memory_rows, mask);
  ASSERT_EQ(context.sizes(), expected_context.sizes());
  ASSERT_EQ(weights.sizes(), expected_weights.sizes());
  EXPECT_TRUE(torch::allclose(context.to(torch::kDouble), expected_context, 1e-5, 1e-5))
      << (context.to(torch::kDouble) - expected_context).abs().max();
  EXPECT_TRUE(torch::allclose(weights.to(torch::kDouble), expected_weights, 1e-5, 1e-6))
      << (weights.to(torch::kDouble) - expected_weights).abs().max();
}

TEST(StepContext, AdditiveAndDotScoresEqualTheComposition) {
  testing::KernelSwitch on(true);
  torch::manual_seed(8);
  for (int threads : {1, 2}) {
    testing::ThreadCount thread_count(threads);
    for (int64_t width : {1, 17, 64}) {
      for (int64_t positions : {1, 4, 29}) {
        const int64_t batch = 13, memory_width = 2 * width + 3;
        // Scores from tiny to saturated tanh: keys and queries up to ~+-9.
        torch::Tensor query = torch::randn({batch, width}) * 3;
        torch::Tensor keys = torch::randn({batch, positions, width}) * 3;
        torch::Tensor memory =
            torch::randn({batch, positions + 2, memory_width}).narrow(1, 1, positions);
        torch::Tensor mask =
            torch::arange(positions).unsqueeze(0) >= torch::randint(1, positions + 1, {batch, 1});
        torch::Tensor energy = torch::randn({width});
        expect_context_as_composed(query, keys, energy, 1.0, memory, {}, {}, mask);
        expect_context_as_composed(query, keys, {}, 0.125, memory.contiguous(), {}, {}, {});
      }
    }
  }
}

TEST(StepContext, ReadsKeysAndMemoryThroughRowIndices) {
  testing::KernelSwitch on(true);
  torch::manual_seed(9);
  const int64_t sentences = 3, beam = 4, positions = 7, width = 12;
  torch::Tensor keys = torch::randn({sentences, positions, width});
  torch::Tensor memory = torch::randn({sentences, positions, 2 * width});
  torch::Tensor mask =
      torch::arange(positions).unsqueeze(0) >= torch::tensor({7, 2, 5}).unsqueeze(1);
  torch::Tensor rows = torch::arange(sentences).repeat_interleave(beam).index_select(
      0, torch::tensor({0, 0, 2, 3, 5, 5, 5, 6, 8, 11}));
  torch::Tensor query = torch::randn({rows.size(0), width});
  expect_context_as_composed(query, keys, torch::randn({width}), 1.0, memory, rows, rows,
                             mask.index_select(0, rows));
  expect_context_as_composed(query, keys.index_select(0, rows), {}, 1.0, memory, {}, rows, {});
}

TEST(StepContext, AFullyMaskedRowIsNaNAndOtherOperandsAreRefused) {
  testing::KernelSwitch on(true);
  torch::Tensor query = torch::randn({2, 4});
  torch::Tensor keys = torch::randn({2, 3, 4});
  torch::Tensor memory = torch::randn({2, 3, 6});
  torch::Tensor mask =
      torch::tensor({false, true, true, true, true, true}, torch::kBool).view({2, 3});
  auto [context, weights] = step_context(query, keys, {}, 1.0, memory, {}, {}, mask);
  EXPECT_TRUE(context[1].isnan().all().item<bool>());
  EXPECT_TRUE(weights[0].equal(torch::tensor({1.0f, 0.0f, 0.0f})));
  EXPECT_TRUE(context[0].equal(memory[0][0]));
  EXPECT_FALSE(
      step_context_applies(query.unsqueeze(1), keys, {}, memory, {}, {}, {}));  // (B, T, A)
  EXPECT_FALSE(step_context_applies(query.to(torch::kBFloat16), keys, {}, memory, {}, {}, {}));
  EXPECT_FALSE(step_context_applies(query.clone().requires_grad_(), keys, {}, memory, {}, {}, {}));
  EXPECT_FALSE(
      step_context_applies(query, keys, torch::randn({3}), memory, {}, {}, {}));  // energy of 3
  EXPECT_FALSE(
      step_context_applies(query, keys, {}, torch::randn({2, 4, 6}), {}, {}, {}));  // 4 positions
  EXPECT_FALSE(step_context_applies(
      query, keys, {}, memory.transpose(1, 2).contiguous().transpose(1, 2), {}, {}, {}));
  EXPECT_FALSE(step_context_applies(query, keys, {}, memory, torch::tensor({0, 1, 1}), {},
                                    {}));  // 3 rows for 2
  {
    testing::KernelSwitch off(false);
    EXPECT_FALSE(step_context_applies(query, keys, {}, memory, {}, {}, {}));
  }
  EXPECT_THROW(step_context(query, keys, {}, 1.0, memory, {}, torch::tensor({0, 5}), {}),
               c10::Error);
}

}  // namespace
}  // namespace nmtzoo
