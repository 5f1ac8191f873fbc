// SPDX-License-Identifier: MIT
#include "libtorch/search/alignment.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/search/search.h"
#include "tests/models/model_fixtures.h"
#include "torch_free/archs/registry.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

TEST(WordAlignment, SubwordsMapToWordsAndPairsArePharaoh) {
  const std::vector<std::string> source{
      "\xe2\x96\x81"
      "Ein",
      "\xe2\x96\x81"
      "Fahr",
      "rad", "."};
  const std::vector<std::string> target{
      "\xe2\x96\x81"
      "A",
      "\xe2\x96\x81"
      "bi",
      "cycle", "."};
  EXPECT_EQ(word_of_piece(source), (std::vector<int64_t>{0, 1, 1, 1}));
  // Target piece t attends most to source piece best[t]; row 4 (EOS) and column 4 (EOS) ignored.
  at::Tensor attention = torch::full({5, 5}, 0.01);
  const std::vector<int64_t> best{0, 2, 1, 3};
  for (int64_t t = 0; t < 4; ++t) attention[t][best[static_cast<size_t>(t)]] = 0.9;
  attention[0][4] = 5.0;  // the source EOS never aligns
  attention = attention.index_put_({4}, 5.0);
  WordAlignment pairs = hard_word_alignment(attention, source, target);
  EXPECT_EQ(pharaoh(pairs), "0-0 1-1");
  EXPECT_EQ(pharaoh(hard_word_alignment(attention, source, {})), "");
}

// Trains a small model of `variant` on copying sequences of 8..14 tokens and returns the hard
// alignments of its correct copies of 10-token test sequences (as "i-j" lists), the number of
// links on the diagonal and the number of links.
struct CopyAlignments {
  std::vector<std::string> alignments;
  int64_t diagonal = 0;
  int64_t beside_diagonal = 0;  // one word off it
  int64_t links = 0;
};

CopyAlignments copy_task_alignments(const std::string& variant, int steps) {
  // One thread, whatever the machine or an earlier test set: float sums, and so the trained
  // model, depend on the thread count (at 2 threads the RNN's diagonal share is 0.8875, not
  // 0.9+) and on the CPU's kernels (0.8875 at one thread on an Intel Xeon, 0.9+ on an AMD EPYC).
  const int threads = torch::get_num_threads();
  torch::set_num_threads(1);
  struct RestoreThreads {
    int count;
    ~RestoreThreads() { torch::set_num_threads(count); }
  } restore{threads};
  torch::manual_seed(3);
  RunConfig config = testing::tiny_config(variant);
  if (variant == "rnn_bahdanau") {
    config.model.arch_options["emb_dim"] = "32";
    config.model.arch_options["hidden_dim"] = "64";
    config.model.arch_options["attention_dim"] = "32";
    config.model.arch_options["readout_dim"] = "32";
  } else {
    config.model.arch_options["d_model"] = "32";
    config.model.arch_options["ffn_dim"] = "64";
    config.model.encoder_layers = 1;
    config.model.decoder_layers = 1;
  }
  auto model =
      build_model(config.model, VocabSizes{testing::kTinyVocab, testing::kTinyVocab, true});
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  auto copy_batch = [](int64_t size, int64_t length) {
    at::Tensor words =
        torch::randint(kEosId + 1, testing::kTinyVocab, {size, length}, torch::kLong);
    at::Tensor eos = torch::full({size, 1}, kEosId, torch::kLong);
    at::Tensor bos = torch::full({size, 1}, kBosId, torch::kLong);
    return std::tuple{torch::cat({words, eos}, 1), torch::cat({bos, words}, 1),
                      torch::cat({words, eos}, 1)};
  };
  model->train();
  for (int step = 0; step < steps; ++step) {
    auto [src, tgt_in, tgt_out] = copy_batch(32, 8 + step % 7);
    at::Tensor logits = model->forward(src, src.eq(kPadId), tgt_in);
    at::Tensor loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                                           tgt_out.reshape({-1}));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  model->eval();
  auto [src, tgt_in, tgt_out] = copy_batch(8, 10);
  SearchOptions options;
  options.beam = 3;
  options.record_attention = true;
  options.attention.layer = 0;  // the only layer
  auto results = beam_search(*model, src, src.eq(kPadId), options);
  std::vector<std::string> pieces;
  for (int i = 0; i < 10; ++i) pieces.push_back("\xe2\x96\x81w" + std::to_string(i));
  CopyAlignments found;
  for (size_t b = 0; b < results.size(); ++b) {
    const Hypothesis& best = results[b][0];
    const auto row = static_cast<int64_t>(b);
    if (best.tokens !=
        std::vector<int64_t>(src[row].data_ptr<int64_t>(), src[row].data_ptr<int64_t>() + 10)) {
      continue;  // the diagonal is asked of correct copies
    }
    WordAlignment links = hard_word_alignment(best.attention, pieces, pieces);
    found.alignments.push_back(pharaoh(links));
    for (const auto& [i, j] : links) {
      found.diagonal += i == j ? 1 : 0;
      found.beside_diagonal += i == j + 1 || i + 1 == j ? 1 : 0;
    }
    found.links += static_cast<int64_t>(links.size());
  }
  return found;
}

// A Transformer trained to copy attends to source position t when writing target position t:
// its hard alignment is the diagonal, one link per target word. Not every link: how 800 updates
// of a one-layer model round in float32 decides whether a word's attention peaks on its source
// word or, now and then, one early (one link in ~60 after the attention's products changed
// kernel), so at least 95% on the diagonal and none further than one word from it.
TEST(WordAlignment, ACopyTransformerAlignsTheDiagonal) {
  CopyAlignments found = copy_task_alignments("transformer_post", 800);
  ASSERT_GE(found.alignments.size(), 6u) << "the copy model should have learnt its task";
  const std::string alignments = ::testing::PrintToString(found.alignments);
  EXPECT_EQ(found.links, 10 * static_cast<int64_t>(found.alignments.size())) << alignments;
  EXPECT_GE(static_cast<double>(found.diagonal) / static_cast<double>(found.links), 0.95)
      << alignments;
  EXPECT_EQ(found.diagonal + found.beside_diagonal, found.links) << alignments;
}

// A Bahdanau RNN's annotations come from a bidirectional encoder, so h_(t-1) also knows x_t and
// attention may peak one word early (or late); its links are still overwhelmingly diagonal and
// never further than one word from it.
TEST(WordAlignment, ACopyRnnAlignsMostlyTheDiagonal) {
  CopyAlignments found = copy_task_alignments("rnn_bahdanau", 600);
  ASSERT_GE(found.alignments.size(), 6u) << "the copy model should have learnt its task";
  EXPECT_GE(static_cast<double>(found.diagonal) / static_cast<double>(found.links), 0.85)
      << ::testing::PrintToString(found.alignments);
  EXPECT_EQ(found.diagonal + found.beside_diagonal, found.links)
      << ::testing::PrintToString(found.alignments);
}

}  // namespace
}  // namespace nmtzoo
