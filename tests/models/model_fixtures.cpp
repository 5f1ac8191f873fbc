// SPDX-License-Identifier: MIT
#include "tests/models/model_fixtures.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/runtime/batch.h"
#include "libtorch/runtime/trained_model.h"
#include "tests/support/kernel_scopes.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/corpus.h"

namespace nmtzoo::testing {

const std::vector<std::string>& tiny_variants() {
  static const std::vector<std::string> variants{
      "transformer_post",     "transformer_pre", "transformer_learned_gelu",
      "transformer_relative", "rnn_bahdanau",    "rnn_bahdanau_lstm",
      "rnn_bahdanau_2layers", "rnn_luong",       "rnn_encdec",
      "rnn_general_tanh",     "rnn_conditional", "rnn_conditional_lstm_2layers"};
  return variants;
}

RunConfig tiny_config(const std::string& variant) {
  RunConfig config = default_config();
  std::vector<std::string> overrides{"model.dropout=0", "model.max_positions=64"};
  if (variant.rfind("transformer", 0) == 0) {
    overrides.insert(overrides.end(),
                     {"model.arch=transformer", "model.d_model=16", "model.heads=2",
                      "model.ffn_dim=24", "model.encoder_layers=2", "model.decoder_layers=2"});
    if (variant == "transformer_pre") overrides.push_back("model.norm=pre");
    // A clip of 3 is shorter than the test sentences, so clipped distances are exercised too.
    if (variant == "transformer_relative") {
      overrides.insert(overrides.end(),
                       {"model.positions=relative", "model.max_relative_positions=3"});
    }
    if (variant == "transformer_learned_gelu") {
      overrides.insert(overrides.end(), {"model.positions=learned", "model.activation=gelu",
                                         "model.share_embeddings=none"});
    }
  } else {
    overrides.insert(overrides.end(),
                     {"model.arch=rnn_bahdanau", "model.emb_dim=8", "model.hidden_dim=12",
                      "model.attention_dim=10", "model.readout_dim=8"});
    if (variant == "rnn_bahdanau_lstm") overrides.push_back("model.cell=lstm");
    if (variant == "rnn_bahdanau_2layers") {
      overrides.insert(overrides.end(), {"model.encoder_layers=2", "model.decoder_layers=2",
                                         "model.share_embeddings=decoder"});
    }
    if (variant == "rnn_luong") overrides.push_back("model.arch=rnn_luong");
    if (variant == "rnn_encdec") overrides.push_back("model.arch=rnn_encdec");
    if (variant.rfind("rnn_conditional", 0) == 0) {
      overrides.push_back("model.attention_query=conditional");
    }
    if (variant == "rnn_conditional_lstm_2layers") {
      overrides.insert(overrides.end(), {"model.cell=lstm", "model.decoder_layers=2"});
    }
    if (variant == "rnn_general_tanh") {
      overrides.insert(overrides.end(), {"model.readout=tanh", "model.attention=general"});
    }
  }
  apply_overrides(config, overrides);
  apply_model_preset(config);
  return config;
}

std::shared_ptr<EncoderDecoder> tiny_model(const std::string& variant, uint64_t seed) {
  torch::manual_seed(seed);
  auto model = build_model(tiny_config(variant).model, VocabSizes{kTinyVocab, kTinyVocab, true});
  model->eval();
  return model;
}

TinyBatch random_batch(const std::vector<int64_t>& src_lengths,
                       const std::vector<int64_t>& tgt_lengths, uint64_t seed) {
  torch::manual_seed(seed);
  TokenizedCorpus corpus;
  std::vector<int64_t> rows;
  for (size_t i = 0; i < src_lengths.size(); ++i) {
    auto ids = [](int64_t length) {
      auto t = torch::randint(4, kTinyVocab, {length}, torch::kInt);
      return std::vector<int32_t>(t.data_ptr<int32_t>(), t.data_ptr<int32_t>() + length);
    };
    corpus.src.push_back(ids(src_lengths[i]));
    corpus.tgt.push_back(ids(tgt_lengths[i]));
    rows.push_back(static_cast<int64_t>(i));
  }
  Batch batch = make_batch(corpus, rows);
  return {batch.src_tokens, batch.src_pad_mask, batch.tgt_in, batch.tgt_out};
}

std::vector<at::Tensor> training_step(EncoderDecoder& model, const TinyBatch& batch, bool kernels,
                                      const std::function<void(const at::Tensor& loss)>& inspect) {
  KernelSwitch kernel_switch(kernels);
  model.zero_grad();
  const at::Tensor logits = model.forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  const at::Tensor loss = torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), batch.tgt_out.reshape({-1}));
  if (inspect) inspect(loss);
  loss.backward();
  std::vector<at::Tensor> result{loss.detach()};
  for (const auto& p : model.parameters())
    result.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  return result;
}

void expect_alike(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double rtol,
                  double atol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].defined(), b[i].defined()) << "tensor " << i;
    if (a[i].defined()) {
      EXPECT_TRUE(torch::allclose(a[i], b[i], rtol, atol))
          << "tensor " << i << ": largest difference " << (a[i] - b[i]).abs().max().item<double>();
    }
  }
}

}  // namespace nmtzoo::testing
