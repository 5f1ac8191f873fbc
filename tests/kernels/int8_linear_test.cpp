// SPDX-License-Identifier: MIT
#include "libtorch/kernels/int8_linear.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/models/functional.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/translation_pipeline.h"
#include "tests/support/kernel_scopes.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

// Largest error relative to the largest magnitude of the float32 result.
double relative_error_against_float32(const at::Tensor& ours, const at::Tensor& reference) {
  return (ours - reference).abs().max().item<double>() / reference.abs().max().item<double>();
}

TEST(Int8Linear, StaysCloseToFloat32ForAnyShapeWithAndWithoutBias) {
  torch::manual_seed(3);
  torch::NoGradGuard no_grad;
  Int8Linears int8;
  const auto weight = torch::randn({48, 40});
  const auto bias = torch::randn({48});
  // Rows of 3-D and 2-D inputs, nonnegative inputs (after a ReLU), a single row.
  for (const auto& x :
       {torch::randn({5, 7, 40}), torch::randn({13, 40}).relu(), torch::randn({1, 40}) * 100}) {
    const auto reference = torch::nn::functional::linear(x, weight, bias);
    const auto ours = int8.linear(x, weight, bias);
    ASSERT_EQ(ours.sizes(), reference.sizes());
    EXPECT_LT(relative_error_against_float32(ours, reference), 0.02) << x.sizes();
    EXPECT_LT(relative_error_against_float32(int8.linear(x, weight, {}),
                                             torch::nn::functional::linear(x, weight)),
              0.02);
  }
  EXPECT_EQ(int8.linear(torch::randn({0, 3, 40}), weight, bias).sizes(),
            (std::vector<int64_t>{0, 3, 48}));
  // One packed form per weight and bias, made once.
  EXPECT_EQ(int8.packed_weights(), 2);
  EXPECT_GE(int8.int8_bytes(), 48 * 40);
  EXPECT_GT(int8.pack_seconds(), 0.0);
}

TEST(Int8Linear, AppliesInsideItsScopeToInferenceOnly) {
  torch::manual_seed(4);
  Int8Linears int8;
  const auto weight = torch::randn({6, 8});
  const auto x = torch::randn({3, 8});
  const auto reference = torch::nn::functional::linear(x, weight);
  {
    Int8Scope scope(&int8);
    EXPECT_EQ(active_int8_linears(), &int8);
    EXPECT_TRUE(torch::equal(apply_linear(x, weight), reference));  // grad mode on: float32
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(torch::equal(apply_linear(x, weight), reference));
    EXPECT_LT(relative_error_against_float32(apply_linear(x, weight), reference), 0.02);
    Int8Scope inner(nullptr);  // null keeps the outer scope
    EXPECT_EQ(active_int8_linears(), &int8);
  }
  EXPECT_EQ(active_int8_linears(), nullptr);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(apply_linear(x, weight), reference));
}

TEST(Int8Linear, DropsThePackedFormOfAWeightNothingElseHolds) {
  torch::NoGradGuard no_grad;
  Int8Linears int8;
  const auto kept = torch::randn({16, 8});
  const auto x = torch::randn({3, 8});
  int8.linear(x, kept, {});
  // Per-batch weights (a shortlist's gathered rows) come and go, often at the same address: each
  // is packed anew, never confused with a predecessor, and the dead ones are dropped.
  for (int i = 0; i < 5; ++i) {
    const auto transient = torch::randn({16, 8});
    const auto reference = torch::nn::functional::linear(x, transient);
    EXPECT_LT(relative_error_against_float32(int8.linear(x, transient, {}), reference), 0.02) << i;
  }
  EXPECT_EQ(int8.packed_weights(), 2);     // `kept` and the last transient one
  const auto view = kept.narrow(0, 0, 8);  // a view of a held weight shares its memory
  int8.linear(x, view, {});
  int8.linear(x, kept, {});
  EXPECT_EQ(int8.packed_weights(), 2);  // the last transient one dropped, the view packed
}

// Every linear layer of both architectures runs in int8 inside a Translator with dtype int8, and
// the next-token distributions stay close to float32's.
// expected_weights: packed by a forward pass; decoding_weights (default: the same) by beam search.
void expect_int8_close(const std::string& arch, int64_t expected_weights,
                       int64_t decoding_weights = -1) {
  // The layer counts are those of the kernels' paths (the RNN decoder's context projections).
  testing::KernelSwitch on(true);
  testing::TinyRun run(arch);
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  torch::NoGradGuard no_grad;
  trained.model->eval();
  const auto src = torch::tensor({{5, 6, 7, 8, 2}, {9, 10, 2, 0, 0}}, torch::kLong);
  const auto mask = src.eq(0);
  const auto tgt = torch::tensor({{1, 11, 12}, {1, 13, 14}}, torch::kLong);
  const auto reference = trained.model->forward(src, mask, tgt).log_softmax(-1);
  Int8Linears int8;
  at::Tensor ours;
  {
    Int8Scope scope(&int8);
    ours = trained.model->forward(src, mask, tgt).log_softmax(-1);
  }
  EXPECT_EQ(int8.packed_weights(), expected_weights) << arch;
  EXPECT_LT((ours.exp() - reference.exp()).abs().max().item<double>(), 0.02) << arch;

  SearchOptions options;
  options.dtype = DecodeDtype::kInt8;
  Int8Linears shared;
  TranslationPipeline translator(*trained.model, trained.tokenizers, options, torch::kCPU, &shared);
  const std::vector<std::string> lines{"alpha bravo", "", "charlie delta echo"};
  const auto translations = translator.translate(lines);
  ASSERT_EQ(translations.size(), lines.size());
  EXPECT_TRUE(translations[1].nbest.empty());
  EXPECT_FALSE(translations[0].nbest.empty());
  EXPECT_EQ(shared.packed_weights(), decoding_weights < 0 ? expected_weights : decoding_weights)
      << "the decoder's step uses the same layers";
}

TEST(Int8Linear, RunsEveryLinearLayerOfTheTransformerCloseToFloat32) {
  // Per encoder layer: QKV, output, two FFN; per decoder layer: self QKV, output, cross Q, cross
  // KV, output, two FFN; then the output projection.
  const RunConfig config = testing::TinyRun("transformer").config();
  expect_int8_close("transformer",
                    4 * config.model.encoder_layers + 7 * config.model.decoder_layers + 1);
}

TEST(Int8Linear, RunsTheRnnsLinearLayersCloseToFloat32) {
  // The initial-state projection, attention's W and U, the readout, the output projection, and
  // both products of each decoder cell (the encoder's recurrent layers stay in float32). Beam
  // search packs the readout and the first cell's input product as two each: their context
  // columns, applied to the source once per sentence (context projections), and the others.
  const RunConfig config = testing::TinyRun("rnn_bahdanau").config();
  expect_int8_close("rnn_bahdanau", 5 + 2 * config.model.decoder_layers,
                    7 + 2 * config.model.decoder_layers);
}

TEST(Int8Linear, RecurrentCellsEqualTheirModulesAndStayCloseInInt8) {
  torch::manual_seed(6);
  torch::NoGradGuard no_grad;
  torch::nn::GRUCell gru(12, 10);
  torch::nn::LSTMCell lstm(12, 10);
  const auto x = torch::randn({4, 12});
  const auto h = torch::randn({4, 10});
  const auto c = torch::randn({4, 10});
  const auto gru_reference = gru->forward(x, h);
  const auto [h_reference, c_reference] = lstm->forward(x, std::make_tuple(h, c));
  EXPECT_TRUE(torch::equal(gru_cell(x, h, *gru), gru_reference));
  EXPECT_TRUE(torch::equal(std::get<0>(lstm_cell(x, h, c, *lstm)), h_reference));
  const auto gru_gates = torch::addmm(gru->bias_ih, x, gru->weight_ih.t());
  const auto lstm_gates = torch::addmm(lstm->bias_ih, x, lstm->weight_ih.t());
  EXPECT_LT(
      (gru_cell_from_input_gates(gru_gates, h, *gru) - gru_reference).abs().max().item<double>(),
      1e-6);
  const auto [h_from_gates, c_from_gates] = lstm_cell_from_input_gates(lstm_gates, h, c, *lstm);
  EXPECT_LT((h_from_gates - h_reference).abs().max().item<double>(), 1e-6);
  EXPECT_LT((c_from_gates - c_reference).abs().max().item<double>(), 1e-6);
  Int8Linears int8;
  Int8Scope scope(&int8);
  EXPECT_LT((gru_cell(x, h, *gru) - gru_reference).abs().max().item<double>(), 0.02);
  const auto [h_int8, c_int8] = lstm_cell(x, h, c, *lstm);
  EXPECT_LT((h_int8 - h_reference).abs().max().item<double>(), 0.02);
  EXPECT_LT((c_int8 - c_reference).abs().max().item<double>(), 0.02);
  EXPECT_EQ(int8.packed_weights(), 4);
}

}  // namespace
}  // namespace nmtzoo
