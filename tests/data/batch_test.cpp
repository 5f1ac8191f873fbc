// SPDX-License-Identifier: MIT
#include "libtorch/runtime/batch.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "torch_free/data/corpus.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

TEST(Batch, PadsAndShiftsTargets) {
  TokenizedCorpus corpus;
  corpus.src = {{10, 11, 12}, {20}};
  corpus.tgt = {{30}, {40, 41}};
  Batch batch = make_batch(corpus, {0, 1});
  auto expect = [](const at::Tensor& actual, std::vector<std::vector<int64_t>> rows) {
    ASSERT_EQ(actual.size(0), static_cast<int64_t>(rows.size()));
    for (size_t b = 0; b < rows.size(); ++b) {
      auto row = actual[b];
      EXPECT_EQ(
          std::vector<int64_t>(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel()),
          rows[b])
          << "row " << b;
    }
  };
  const int64_t P = kPadId, B = kBosId, E = kEosId;
  expect(batch.src_tokens, {{10, 11, 12, E}, {20, E, P, P}});
  expect(batch.tgt_in, {{B, 30, P}, {B, 40, 41}});
  expect(batch.tgt_out, {{30, E, P}, {40, 41, E}});
  EXPECT_TRUE(batch.src_pad_mask.equal(batch.src_tokens.eq(kPadId)));
  EXPECT_EQ(batch.src_token_count, 6);
  EXPECT_EQ(batch.tgt_token_count, 5);
  EXPECT_EQ(batch.tgt_out.ne(kPadId).sum().item<int64_t>(), batch.tgt_token_count);
  EXPECT_EQ(batch.indices, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace nmtzoo
