// SPDX-License-Identifier: MIT
#include "libtorch/runtime/batch.h"

#include <torch/torch.h>

#include "torch_free/data/corpus.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {

at::Tensor pad_sequences(const std::vector<TokenSpan>& sequences, bool add_bos, bool add_eos) {
  const int64_t extra = (add_bos ? 1 : 0) + (add_eos ? 1 : 0);
  int64_t longest = 0;
  for (const auto& sequence : sequences) {
    longest = std::max<int64_t>(longest, static_cast<int64_t>(sequence.size) + extra);
  }
  auto tokens =
      torch::full({static_cast<int64_t>(sequences.size()), longest}, kPadId, torch::kLong);
  auto rows = tokens.accessor<int64_t, 2>();
  for (size_t b = 0; b < sequences.size(); ++b) {
    int64_t t = 0;
    if (add_bos) rows[b][t++] = kBosId;
    for (int32_t id : sequences[b]) rows[b][t++] = id;
    if (add_eos) rows[b][t++] = kEosId;
  }
  return tokens;
}

Batch make_batch(const TokenizedCorpus& corpus, const std::vector<int64_t>& indices) {
  std::vector<PairTokens> pairs;
  pairs.reserve(indices.size());
  for (int64_t i : indices) {
    const auto& src = corpus.src.at(static_cast<size_t>(i));
    const auto& tgt = corpus.tgt.at(static_cast<size_t>(i));
    pairs.push_back({{src.data(), src.size()}, {tgt.data(), tgt.size()}});
  }
  return make_batch(pairs, indices);
}

Batch make_batch(const std::vector<PairTokens>& pairs, const std::vector<int64_t>& indices) {
  std::vector<TokenSpan> src;
  std::vector<TokenSpan> tgt;
  Batch batch;
  batch.indices = indices;
  for (const PairTokens& pair : pairs) {
    src.push_back(pair.src);
    tgt.push_back(pair.tgt);
    batch.src_token_count += static_cast<int64_t>(pair.src.size) + 1;
    batch.tgt_token_count += static_cast<int64_t>(pair.tgt.size) + 1;
  }
  batch.src_tokens = pad_sequences(src, /*add_bos=*/false, /*add_eos=*/true);
  batch.src_pad_mask = batch.src_tokens.eq(kPadId);
  auto bos_y_eos = pad_sequences(tgt, /*add_bos=*/true, /*add_eos=*/true);
  const int64_t t = bos_y_eos.size(1) - 1;
  batch.tgt_in = bos_y_eos.narrow(1, 0, t).clone();
  // tgt_in keeps the EOS of the longest row only as padding's neighbour; turn it into padding.
  batch.tgt_in.masked_fill_(batch.tgt_in.eq(kEosId), kPadId);
  batch.tgt_out = bos_y_eos.narrow(1, 1, t).clone();
  return batch;
}

Batch Batch::to(const c10::Device& device) const {
  Batch moved = *this;
  moved.src_tokens = src_tokens.to(device);
  moved.src_pad_mask = src_pad_mask.to(device);
  moved.tgt_in = tgt_in.to(device);
  moved.tgt_out = tgt_out.to(device);
  return moved;
}

}  // namespace nmtzoo
