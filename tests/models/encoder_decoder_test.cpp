// SPDX-License-Identifier: MIT
// The EncoderDecoder contract, checked for every model variant of the zoo.
#include "libtorch/models/encoder_decoder.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "libtorch/runtime/weights.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/kernel_scopes.h"
#include "tests/support/test_support.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

using testing::random_batch;
using testing::tiny_model;

class EveryModel : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Zoo, EveryModel, ::testing::ValuesIn(testing::tiny_variants()),
                         [](const auto& info) { return info.param; });

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST_P(EveryModel, ForwardGivesLogitsPerTargetPosition) {
  auto model = tiny_model(GetParam());
  auto batch = random_batch({5, 3}, {4, 6}, 1);
  auto logits = model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 7, testing::kTinyVocab}));
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
}

TEST_P(EveryModel, IncrementalDecodeMatchesForward) {
  auto model = tiny_model(GetParam());
  auto batch = random_batch({6, 2, 4}, {5, 7, 3}, 2);
  torch::NoGradGuard no_grad;
  auto expected =
      model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in).log_softmax(-1);
  DecoderState state = model->encode(batch.src_tokens, batch.src_pad_mask);
  for (int64_t t = 0; t < batch.tgt_in.size(1); ++t) {
    auto log_probs = model->decode_step(batch.tgt_in.select(1, t), state);
    EXPECT_LT(max_abs_diff(log_probs, expected.select(1, t)), 1e-5) << "position " << t;
  }
  EXPECT_EQ(state.step, batch.tgt_in.size(1));
}

TEST_P(EveryModel, AStepNormalisedInPlaceEqualsTheAutogradPathBitForBit) {
  // Outside autograd a step's float32 logits become log-probabilities where they are; with
  // gradients on they are normalised into a new tensor: the two must not differ in a bit. The
  // one-pass step attention (outside autograd only, equal up to rounding: the next test) is off
  // on both sides.
  testing::KernelSwitch composition(false);
  auto model = tiny_model(GetParam());
  model->eval();
  auto batch = random_batch({6, 2, 4}, {5, 7, 3}, 4);
  DecoderState in_place_state = model->encode(batch.src_tokens, batch.src_pad_mask);
  DecoderState autograd_state = model->encode(batch.src_tokens, batch.src_pad_mask);
  for (int64_t t = 0; t < batch.tgt_in.size(1); ++t) {
    at::Tensor in_place;
    {
      torch::NoGradGuard no_grad;
      in_place = model->decode_step(batch.tgt_in.select(1, t), in_place_state);
    }
    at::Tensor with_autograd = model->decode_step(batch.tgt_in.select(1, t), autograd_state);
    EXPECT_TRUE(with_autograd.requires_grad());
    EXPECT_TRUE(in_place.equal(with_autograd.detach())) << "position " << t;
  }
}

TEST_P(EveryModel, AStepsKernelsEqualTheCompositionThroughReorders) {
  // Decoding steps with the CPU kernels (the one-pass step attention reading the source's keys
  // through the rows search left pending; the RNNs' context projections) against LibTorch's
  // operators, through beam search's reorders: rows repeated per hypothesis, permuted within
  // sentences, then a sentence leaving. In eval mode, as decoding runs.
  auto model = tiny_model(GetParam());
  model->eval();
  torch::NoGradGuard no_grad;
  auto batch = random_batch({6, 2, 4}, {5, 7, 3}, 5);
  const int64_t beam = 3;
  DecoderState states[2];
  for (int kernels : {0, 1}) {
    testing::KernelSwitch kernel_switch(kernels == 1);
    states[kernels] = model->encode(batch.src_tokens, batch.src_pad_mask);
  }
  const at::Tensor tokens = batch.tgt_in.repeat_interleave(beam, 0);
  const at::Tensor permuted = torch::tensor({2, 0, 0, 3, 5, 4, 6, 6, 6});
  const at::Tensor leaving = torch::tensor({0, 1, 2, 6, 7, 8});  // sentence 1 is done
  at::Tensor rows = torch::arange(tokens.size(0));
  for (int64_t t = 0; t < tokens.size(1); ++t) {
    if (t == 1) rows = rows.index_select(0, permuted);
    if (t == 2) rows = rows.index_select(0, leaving);
    at::Tensor log_probs[2];
    for (int kernels : {0, 1}) {
      testing::KernelSwitch kernel_switch(kernels == 1);
      DecoderState& state = states[kernels];
      if (t == 0) state.repeat_rows(beam);
      if (t == 1) state.reorder(permuted, /*source_rows_changed=*/false);
      if (t == 2) state.reorder(leaving);
      log_probs[kernels] = model->decode_step(tokens.index_select(0, rows).select(1, t), state);
    }
    ASSERT_EQ(log_probs[1].sizes(), log_probs[0].sizes()) << "position " << t;
    EXPECT_LT(max_abs_diff(log_probs[1], log_probs[0]), 1e-5) << "position " << t;
  }
}

TEST_P(EveryModel, PaddingChangesNoOutputAtRealPositions) {
  auto model = tiny_model(GetParam());
  torch::NoGradGuard no_grad;
  auto alone = random_batch({3}, {2}, 3);
  auto padded = random_batch({3, 9}, {2, 8}, 3);  // row 0 is the same pair, now padded
  ASSERT_TRUE(alone.src_tokens[0].equal(padded.src_tokens[0].narrow(0, 0, 4)));
  auto a = model->forward(alone.src_tokens, alone.src_pad_mask, alone.tgt_in)[0];
  auto b = model->forward(padded.src_tokens, padded.src_pad_mask, padded.tgt_in)[0].narrow(0, 0, 3);
  EXPECT_LT(max_abs_diff(a, b), 1e-5);
}

TEST_P(EveryModel, FutureTargetTokensDoNotChangeEarlierOutputs) {
  auto model = tiny_model(GetParam());
  torch::NoGradGuard no_grad;
  auto batch = random_batch({5, 5}, {6, 6}, 4);
  auto changed = batch.tgt_in.clone();
  changed.select(1, 4).fill_(kUnkId);
  auto before = model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  auto after = model->forward(batch.src_tokens, batch.src_pad_mask, changed);
  EXPECT_LT(max_abs_diff(before.narrow(1, 0, 4), after.narrow(1, 0, 4)), 1e-6);
  EXPECT_GT(max_abs_diff(before.narrow(1, 4, 3), after.narrow(1, 4, 3)), 1e-4);
}

// Word dropout acts on the tokens' embeddings only while training: at rate ~1 on the source the
// decoder sees no source token (two sources of one length give the same outputs), at rate ~1 on
// the target no previous target token; in eval mode the model is the one without it.
TEST_P(EveryModel, WordDropoutHidesTheTokensWhileTrainingOnly) {
  RunConfig config = testing::tiny_config(GetParam());
  config.model.source_word_dropout = 1 - 1e-9;
  config.model.target_word_dropout = 1 - 1e-9;
  torch::manual_seed(1);
  auto model =
      build_model(config.model, VocabSizes{testing::kTinyVocab, testing::kTinyVocab, true});
  auto plain = tiny_model(GetParam());
  auto one = random_batch({5}, {4}, 11);
  auto other = random_batch({5}, {4}, 12);
  ASSERT_FALSE(one.src_tokens.equal(other.src_tokens));
  ASSERT_FALSE(one.tgt_in.equal(other.tgt_in));
  torch::NoGradGuard no_grad;
  model->eval();
  EXPECT_LT(max_abs_diff(model->forward(one.src_tokens, one.src_pad_mask, one.tgt_in),
                         plain->forward(one.src_tokens, one.src_pad_mask, one.tgt_in)),
            1e-6)
      << "eval: the same weights as the model without word dropout give the same outputs";
  model->train();
  auto a = model->forward(one.src_tokens, one.src_pad_mask, one.tgt_in);
  auto b = model->forward(other.src_tokens, other.src_pad_mask, other.tgt_in);
  EXPECT_LT(max_abs_diff(a, b), 1e-5) << "training: no source or target token reaches the model";
}

TEST_P(EveryModel, GradientsReachEveryParameter) {
  auto model = tiny_model(GetParam());
  model->train();
  auto batch = random_batch({5, 4}, {4, 6}, 5);
  auto logits = model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
  torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), batch.tgt_out.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kPadId))
      .backward();
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
  }
}

TEST_P(EveryModel, LearnsATinyBatchByHeart) {
  auto model = tiny_model(GetParam());
  model->train();
  auto batch = random_batch({6, 5, 7, 4}, {5, 6, 4, 7}, 6);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  double loss_value = 0;
  for (int step = 0; step < 400; ++step) {
    optimizer.zero_grad();
    auto logits = model->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in);
    auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, logits.size(-1)}), batch.tgt_out.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kPadId));
    loss.backward();
    optimizer.step();
    loss_value = loss.item<double>();
    if (loss_value < 0.05) break;
  }
  EXPECT_LT(loss_value, 0.05);
}

TEST_P(EveryModel, ExportImportRoundTripsExactly) {
  testing::TempDir dir;
  auto source = tiny_model(GetParam(), 1);
  auto target = tiny_model(GetParam(), 2);
  export_weights(*source, dir.path("weights.pt"));
  import_weights(*target, dir.path("weights.pt"));
  auto a = source->named_parameters();
  auto b = target->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& item : a) EXPECT_TRUE(item.value().equal(b[item.key()])) << item.key();
  auto batch = random_batch({4}, {3}, 7);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(source->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in)
                  .equal(target->forward(batch.src_tokens, batch.src_pad_mask, batch.tgt_in)));
}

TEST(Weights, MismatchedNamesAndShapesAreListed) {
  testing::TempDir dir;
  export_weights(*tiny_model("transformer_post"), dir.path("transformer.pt"));
  auto rnn = tiny_model("rnn_bahdanau");
  auto before = rnn->parameters()[0].clone();
  try {
    import_weights(*rnn, dir.path("transformer.pt"));
    FAIL();
  } catch (const std::runtime_error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("do not fit the model"), std::string::npos);
    EXPECT_NE(message.find("missing init_proj.weight"), std::string::npos) << message;
    EXPECT_NE(message.find("unexpected encoder.layers.0.self_attn.in_proj_weight"),
              std::string::npos);
    EXPECT_NE(message.find("src_embed.weight has shape"), std::string::npos) << message;
  }
  EXPECT_TRUE(rnn->parameters()[0].equal(before)) << "a failed import must change nothing";
  testing::write_text(dir.path("junk.pt"), "not a pickle");
  EXPECT_THROW(import_weights(*rnn, dir.path("junk.pt")), std::runtime_error);
}

// torch.save'd tensors of another kind: copied, a complex tensor lost its imaginary part and the
// import succeeded; NaN weights were taken as they were.
TEST(Weights, TensorsOfAnotherKindOrNotFiniteAreRefusedNamingThem) {
  testing::TempDir dir;
  auto model = tiny_model("transformer_post");
  auto before = model->named_parameters()["src_embed.weight"].clone();
  auto save_with = [&](const std::string& name, const at::Tensor& replacement) {
    c10::Dict<std::string, at::Tensor> dict;
    for (const auto& item : model->named_parameters()) dict.insert(item.key(), item.value());
    for (const auto& item : model->named_buffers()) dict.insert(item.key(), item.value());
    dict.insert_or_assign(name, replacement);
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
    testing::write_text(dir.path("weights.pt"), std::string(bytes.begin(), bytes.end()));
  };
  const at::Tensor weight = model->named_parameters()["src_embed.weight"];
  const std::vector<std::pair<at::Tensor, std::string>> cases{
      {torch::complex(weight, weight), "src_embed.weight is ComplexFloat in the file but Float"},
      {weight.to(torch::kLong), "src_embed.weight is Long in the file but Float in the model"},
      {weight.to(torch::kBool), "src_embed.weight is Bool in the file but Float in the model"},
      {weight.clone().index_fill_(0, torch::tensor({1, 2}), NAN),
       "src_embed.weight holds " + std::to_string(2 * weight.size(1)) + " NaN or infinite values"}};
  for (const auto& [tensor, expected] : cases) {
    save_with("src_embed.weight", tensor);
    try {
      import_weights(*model, dir.path("weights.pt"));
      ADD_FAILURE() << "imported: " << expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_TRUE(model->named_parameters()["src_embed.weight"].equal(before));
  }
  save_with("src_embed.weight", weight.to(torch::kDouble));  // another float width is a float
  EXPECT_NO_THROW(import_weights(*model, dir.path("weights.pt")));
}

// What experiments/measure/python_peer.py rebuilds its model from and checks before it times it.
TEST(Weights, TheModelSpecNamesTheArchitectureAndItsOwnOptions) {
  testing::TempDir dir;
  RunConfig config = default_config();
  apply_overrides(config, {"model.arch=transformer_small", "model.positions=relative",
                           "model.max_relative_positions=16", "training.max_tokens=3000"});
  export_model_spec(config, 8000, dir.path("model.json"));
  const auto spec = nlohmann::json::parse(testing::read_text(dir.path("model.json")));
  EXPECT_EQ(spec["arch"], "transformer");
  EXPECT_EQ(spec["vocab"], 8000);
  EXPECT_EQ(spec["d_model"], 256);
  EXPECT_EQ(spec["encoder_layers"], 3);
  EXPECT_EQ(spec["positions"], "relative");
  EXPECT_EQ(spec["max_relative_positions"], 16);
  EXPECT_EQ(spec["norm"], "post");
  EXPECT_EQ(spec["max_tokens"], 3000);
}

TEST(DecoderState, ReorderSelectsRowsOfEveryTensor) {
  DecoderState state;
  state.set(kMemorySlot, torch::arange(3).view({3, 1}), SlotKind::kSource);
  state.set(kMemoryPadMaskSlot, torch::tensor({true, false, true}).view({3, 1}), SlotKind::kSource);
  state.set("keys", torch::arange(3) * 10, SlotKind::kSource);
  state.set("hidden", torch::arange(3) * 100, SlotKind::kStep);
  state.set("self_k.0", at::Tensor(), SlotKind::kStep);
  state.attention = torch::arange(3) * 1000;
  auto rows = torch::tensor({2, 2, 0});
  state.reorder(rows);
  EXPECT_TRUE(state[kMemorySlot].view({-1}).equal(torch::tensor({2, 2, 0})));
  EXPECT_TRUE(state[kMemoryPadMaskSlot].view({-1}).equal(torch::tensor({true, true, true})));
  EXPECT_TRUE(state["keys"].equal(torch::tensor({20, 20, 0})));
  EXPECT_TRUE(state["hidden"].equal(torch::tensor({200, 200, 0})));
  EXPECT_FALSE(state["self_k.0"].defined());
  EXPECT_TRUE(state.attention.equal(torch::tensor({2000, 2000, 0})));

  state.reorder(torch::tensor({2, 0, 1}), /*source_rows_changed=*/false);
  EXPECT_TRUE(state["hidden"].equal(torch::tensor({0, 200, 200})));
  EXPECT_TRUE(state["keys"].equal(torch::tensor({20, 20, 0}))) << "per-source entries are kept";

  state.repeat_rows(2);
  EXPECT_EQ(state.rows(), 6);
  EXPECT_TRUE(state["hidden"].equal(torch::tensor({0, 0, 200, 200, 200, 200})));
  EXPECT_TRUE(state["keys"].equal(torch::tensor({20, 20, 20, 20, 0, 0})));
}

TEST(DecoderState, EntriesAreNamedAndKnowTheirKind) {
  DecoderState state;
  state.set(layer_slot("self_k", 1), torch::zeros({2, 1}), SlotKind::kStep);
  state.set("memory_k.1", torch::ones({2, 1}), SlotKind::kSource);
  EXPECT_EQ(state.names(), (std::vector<std::string>{"self_k.1", "memory_k.1"}));
  EXPECT_EQ(state.kind("self_k.1"), SlotKind::kStep);
  EXPECT_EQ(state.kind("memory_k.1"), SlotKind::kSource);
  state.set("self_k.1", torch::ones({2, 3}), SlotKind::kStep);  // replaced, not added
  EXPECT_EQ(state.names().size(), 2u);
  EXPECT_EQ(state["self_k.1"].size(1), 3);
  try {
    state["self_v.1"];
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no entry 'self_v.1'"), std::string::npos);
  }
}

TEST(DecoderState, ChildrenAreReorderedWithTheirParent) {
  DecoderState state;
  for (int64_t i = 0; i < 2; ++i) {
    DecoderState child;
    child.set("hidden", torch::arange(3) + 10 * i, SlotKind::kStep);
    child.set("keys", torch::arange(3) + 100 * i, SlotKind::kSource);
    state.children.push_back(child);
  }
  EXPECT_EQ(state.rows(), 3);
  state.reorder(torch::tensor({1, 1, 0}), /*source_rows_changed=*/false);
  EXPECT_TRUE(state.children[1]["hidden"].equal(torch::tensor({11, 11, 10})));
  EXPECT_TRUE(state.children[1]["keys"].equal(torch::tensor({100, 101, 102})));
  state.repeat_rows(2);
  EXPECT_EQ(state.children[0]["keys"].size(0), 6);
}

TEST(DecoderState, AnEntrySetWithRowsFollowsThemAsAfterAReorder) {
  DecoderState state;
  state.set("memory", torch::tensor({10, 11}), SlotKind::kSource);
  state.repeat_rows(2);
  const auto memory = state.indexed("memory");
  state.set("projections", memory.value * 2, SlotKind::kSource, memory.rows);
  EXPECT_EQ(state.rows(), 4);
  EXPECT_TRUE(state.indexed("projections").value.equal(torch::tensor({20, 22})))
      << "nothing gathered yet";
  state.reorder(torch::tensor({3, 0}));
  EXPECT_TRUE(state["projections"].equal(torch::tensor({22, 20})));
  EXPECT_TRUE(state["memory"].equal(torch::tensor({11, 10})));
}

TEST(DecoderState, AppendGathersThePendingRowsOfReorders) {
  // A self-attention cache (B, H, t, D) grown a position per step while the beam reorders rows:
  // the same values as gathering at every reorder and concatenating after.
  DecoderState state;
  state.set("self_k.0", at::Tensor(), SlotKind::kStep);
  at::Tensor reference = torch::arange(3 * 2 * 1 * 4, torch::kFloat).view({3, 2, 1, 4});
  EXPECT_TRUE(state.append("self_k.0", reference, 2).equal(reference));
  for (const auto& rows :
       {torch::tensor({2, 0, 1}), torch::tensor({1, 1, 0})}) {  // not read between
    state.reorder(rows);
    reference = reference.index_select(0, rows);
  }
  EXPECT_EQ(state.rows(), 3);
  at::Tensor step = torch::full({3, 2, 1, 4}, -1.0f);
  reference = torch::cat({reference, step}, 2);
  EXPECT_TRUE(state.append("self_k.0", step, 2).equal(reference));

  state.reorder(torch::tensor({2, 0}));  // a sentence left the batch
  EXPECT_EQ(state.rows(), 2);
  reference =
      torch::cat({reference.index_select(0, torch::tensor({2, 0})), torch::zeros({2, 2, 1, 4})}, 2);
  EXPECT_TRUE(state.append("self_k.0", torch::zeros({2, 2, 1, 4}), 2).equal(reference));
  EXPECT_TRUE(state["self_k.0"].equal(reference));

  state.reorder(torch::tensor({1, 1}));
  EXPECT_TRUE(state["self_k.0"].equal(reference.index_select(0, torch::tensor({1, 1}))))
      << "a read gathers the pending rows";
  EXPECT_THROW(state.append("self_k.0", reference, 0), c10::Error);
  EXPECT_THROW(state.append("self_v.0", reference, 2), c10::Error);
}

}  // namespace
}  // namespace nmtzoo
