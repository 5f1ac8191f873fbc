// SPDX-License-Identifier: MIT
#include "torch_free/archs/registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/models/transformer.h"
#include "libtorch/runtime/run_start.h"
#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/arch_options.h"
#include "torch_free/config/loader.h"
#include "torch_free/config/schema.h"

namespace nmtzoo {
namespace {

RunConfig config_for(const std::string& arch, std::vector<std::string> overrides = {}) {
  RunConfig config = default_config();
  overrides.push_back("model.arch=" + arch);
  apply_overrides(config, overrides);
  apply_model_preset(config);
  return config;
}

int64_t count_parameters(const EncoderDecoder& model) {
  int64_t total = 0;
  for (const auto& p : model.parameters()) total += p.numel();
  return total;
}

// Closed forms, written from the architectures' definitions.
int64_t transformer_count(int64_t E, int64_t F, int64_t layers_enc, int64_t layers_dec, int64_t V) {
  int64_t attention = 4 * E * E + 4 * E;
  int64_t ffn = 2 * E * F + F + E;
  int64_t encoder_layer = attention + ffn + 4 * E;
  int64_t decoder_layer = 2 * attention + ffn + 6 * E;
  return V * E + layers_enc * encoder_layer + layers_dec * decoder_layer;  // one shared embedding
}

int64_t gru_count(int64_t input, int64_t n) { return 3 * n * (input + n) + 6 * n; }

int64_t rnn_count(int64_t m, int64_t n, int64_t A, int64_t l, int64_t V, bool shared) {
  int64_t embeddings = shared ? V * m : 2 * V * m;
  int64_t encoder = 2 * gru_count(m, n);
  int64_t init = n * n + n;
  int64_t decoder = gru_count(m + 2 * n, n);
  int64_t attention = n * A + 2 * n * A + A + A;
  int64_t readout = (n + m + 2 * n) * 2 * l + 2 * l;
  int64_t output = shared ? 0 : l * V;
  return embeddings + encoder + init + decoder + attention + readout + output;
}

TEST(Registry, PresetParameterCountsMatchClosedForms) {
  const int64_t V = 8000;
  VocabSizes vocab{V, V, true};
  struct Case {
    std::string preset;
    int64_t expected;
  };
  std::vector<Case> cases{
      {"transformer_small", transformer_count(256, 1024, 3, 3, V)},
      {"transformer_base", transformer_count(512, 2048, 6, 6, V)},
      {"rnn_bahdanau", rnn_count(620, 1000, 1000, 500, V, false)},
      {"rnn_bahdanau_small", rnn_count(256, 512, 512, 256, V, true)},
  };
  for (const auto& c : cases) {
    auto model = build_model(config_for(c.preset).model, vocab);
    EXPECT_EQ(count_parameters(*model), c.expected) << c.preset;
  }
}

TEST(Registry, PresetKeepsUserValues) {
  auto config = config_for("transformer_small", {"model.d_model=128"});
  EXPECT_EQ(config.model.arch_options.at("d_model"), "128");
  EXPECT_EQ(config.model.arch_options.at("ffn_dim"), "1024");
  EXPECT_EQ(config.where("model.ffn_dim"), "preset transformer_small");
}

TEST(Registry, MostSpecificPresetWins) {
  auto config = config_for("transformer_big");
  EXPECT_EQ(config.model.arch_options.at("d_model"), "1024");  // transformer_big
  EXPECT_EQ(config.model.encoder_layers, 6);                   // inherited from transformer_base
  EXPECT_DOUBLE_EQ(config.model.dropout, 0.3);
  auto luong = config_for("rnn_luong");
  EXPECT_EQ(luong.model.arch_options.at("attention"), "general");
  EXPECT_EQ(luong.model.arch_options.at("hidden_dim"), "512");  // from rnn_bahdanau_small
}

TEST(Registry, UnknownNameSuggestsTheClosest) {
  try {
    config_for("transfomer_small");
    FAIL();
  } catch (const ConfigError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("unknown model 'transfomer_small'; did you mean 'transformer_small'?"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("rnn_bahdanau"), std::string::npos) << "lists the registered names";
  }
}

TEST(Registry, DuplicateNamesFailAtRegistration) {
  register_builtin_models();
  EXPECT_THROW(register_arch("transformer", ArchSpec{}), std::logic_error);
  EXPECT_THROW(register_preset("transformer_small", "transformer", {}), std::logic_error);
  EXPECT_THROW(register_preset("my_model", "no_such_base", {}), std::logic_error);
}

// A torch-free program registers the architectures' keys only (register_builtin_archs, as
// nmtzoo-plan): building one then names what is missing; its builder can be given once.
TEST(Registry, AnArchitectureWithoutABuilderSaysSoWhenBuilt) {
  register_builtin_models();
  register_builtin_archs();  // after register_builtin_models(): nothing registered twice
  ArchSpec keys_only = arch_spec("transformer");
  keys_only.build = nullptr;
  register_arch("keys_only_transformer", keys_only);
  ModelConfig config =
      config_for("transformer", {"model.d_model=16", "model.ffn_dim=32", "model.heads=2",
                                 "model.encoder_layers=1", "model.decoder_layers=1"})
          .model;
  config.arch = "keys_only_transformer";
  try {
    build_model(config, VocabSizes{8, 8});
    ADD_FAILURE() << "built an architecture without a builder";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'keys_only_transformer' has no builder"),
              std::string::npos)
        << e.what();
  }
  set_arch_builder("keys_only_transformer", arch_spec("transformer").build);
  EXPECT_NE(build_model(config, VocabSizes{8, 8}), nullptr);
  EXPECT_THROW(set_arch_builder("keys_only_transformer", arch_spec("transformer").build),
               std::logic_error);
  EXPECT_THROW(set_arch_builder("no_such_arch", arch_spec("transformer").build), std::logic_error);
}

// An architecture defined outside nmtzoo: a Transformer whose size is its own key `width`, with
// `heads` declared as the built-in Transformer declares it (so shared). Registering it is all it
// takes for the config, presets and the model builder to know it.
ArchSpec width_transformer_arch() {
  static const ArchOptions<TransformerOptions> keys = [] {
    ArchOptions<TransformerOptions> declared(TransformerOptions(0, 0).d_model(16));
    declared.integer("width", NMTZOO_FIELD(d_model), kModelSize,
                     "model size of the test architecture");
    declared.integer("heads", NMTZOO_FIELD(heads), Range{1, 1024}, "Transformer attention heads");
    return declared;
  }();
  auto options_of = [](const ModelConfig& c, const VocabSizes& vocab) {
    return keys.read(c, TransformerOptions(vocab.src, vocab.tgt)
                            .encoder_layers(c.encoder_layers)
                            .decoder_layers(c.decoder_layers)
                            .ffn_dim(32)
                            .sharing(EmbeddingSharing::kAll));
  };
  ArchSpec spec;
  spec.options = keys.specs();
  spec.build = [=](const ModelConfig& c,
                   const VocabSizes& vocab) -> std::shared_ptr<EncoderDecoder> {
    return Transformer(options_of(c, vocab)).ptr();
  };
  spec.check = [](const ModelConfig&) { return std::vector<ModelKeyProblem>{}; };
  spec.model_dim = [=](const ModelConfig& c) { return options_of(c, {}).d_model(); };
  return spec;
}

// Once per process: the tests below share it, in whatever order they run.
void register_width_transformer() {
  register_builtin_models();
  static const bool registered = [] {
    register_arch("width_transformer", width_transformer_arch());
    register_preset("width_transformer_wide", "width_transformer", {{"width", "24"}});
    return true;
  }();
  (void)registered;
}

TEST(Registry, ANewArchitectureOwnsItsKeys) {
  register_width_transformer();

  const OptionSpec* width = find_option("model.width");
  ASSERT_NE(width, nullptr) << "registering published the key to the schema";
  EXPECT_EQ(width->default_value, "16");
  EXPECT_EQ(width->help, "model size of the test architecture");
  EXPECT_NE(config_reference_markdown().find("| `width` | int in [1, 262144] | `16` |"),
            std::string::npos);

  auto config = config_for("width_transformer_wide",
                           {"model.encoder_layers=1", "model.decoder_layers=1", "model.heads=2"});
  EXPECT_EQ(config.where("model.width"), "preset width_transformer_wide");
  EXPECT_EQ(arch_spec("width_transformer").model_dim(config.model), 24);
  const int64_t V = 11;
  auto model = build_model(config.model, VocabSizes{V, V, true});
  EXPECT_EQ(count_parameters(*model), transformer_count(24, 32, 1, 1, V));

  try {
    config_for("width_transformer", {"model.width=wide"});
    ADD_FAILURE() << "a non-integer width was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.width expects an integer, got 'wide'"),
              std::string::npos)
        << e.what();
  }
  // One key, one meaning: redeclaring a published key with another default is refused.
  ArchSpec clash;
  ArchOptions<TransformerOptions> clashing(TransformerOptions(0, 0).d_model(8));
  clashing.integer("d_model", NMTZOO_FIELD(d_model), kModelSize, "another d_model");
  clash.options = clashing.specs();
  EXPECT_THROW(register_arch("clashing_transformer", clash), std::logic_error);
}

// A program that registered an architecture of its own writes that architecture's keys only into
// its runs: the configs and checkpoints of built-in models it writes stay readable by the stock
// apps, which do not know the keys.
TEST(Registry, AWrittenConfigHoldsOnlyItsOwnArchitecturesModelKeys) {
  register_width_transformer();
  auto written = [](const std::string& name) {
    const RunConfig config = config_for(name, {"model.encoder_layers=1", "model.decoder_layers=1"});
    const std::string yaml = to_yaml(config, resolve_arch(config.model.arch));
    EXPECT_EQ(to_yaml(parse_config(yaml, name + ".yaml"), resolve_arch(name)), yaml)
        << "reads back the same";
    return yaml;
  };
  auto has = [](const std::string& yaml, const std::string& line) {
    return yaml.find("\n  " + line) != std::string::npos;
  };
  const std::string transformer = written("transformer_small");
  EXPECT_TRUE(has(transformer, "d_model: 256")) << transformer;
  EXPECT_TRUE(has(transformer, "dropout: ")) << "the keys every architecture has stay";
  EXPECT_FALSE(has(transformer, "width: ")) << transformer;
  EXPECT_FALSE(has(transformer, "hidden_dim: ")) << transformer;
  const std::string rnn = written("rnn_bahdanau_small");
  EXPECT_TRUE(has(rnn, "hidden_dim: ")) << rnn;
  EXPECT_FALSE(has(rnn, "width: ")) << rnn;
  EXPECT_FALSE(has(rnn, "d_model: ")) << rnn;
  const std::string width = written("width_transformer_wide");
  EXPECT_TRUE(has(width, "width: 24")) << width;
  EXPECT_TRUE(has(width, "heads: ")) << "a key the built-in Transformer shares: " << width;
  EXPECT_FALSE(has(width, "d_model: ")) << width;
  // "" writes every architecture's keys (a config not tied to one).
  EXPECT_TRUE(has(to_yaml(config_for("transformer_small"), ""), "width: 16"));

  // So a run's config may set other architectures' keys: they do not make its checkpoint, which
  // does not store them, another model to resume or fine-tune.
  const RunConfig now = config_for("transformer_small", {"model.emb_dim=32", "model.width=8"});
  const RunConfig stored = parse_config(to_yaml(now, "transformer"), "stored config");
  EXPECT_NE(stored.model.arch_options.at("emb_dim"), "32")
      << "not stored: read back as its default";
  EXPECT_EQ(differing_keys(now, stored, {"model"}), std::vector<std::string>{});
  EXPECT_EQ(differing_keys(config_for("transformer_small", {"model.heads=8"}), stored, {"model"}),
            std::vector<std::string>{"model.heads: 4 in the checkpoint, 8 now"});
}

TEST(Registry, APresetKeyOutsideTheSchemaIsAConfigErrorNamingThePreset) {
  register_preset("preset_with_a_typo", "transformer", {{"d_modle", "3"}});
  try {
    config_for("preset_with_a_typo");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("preset preset_with_a_typo: unknown key 'model.d_modle'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Registry, EveryBuiltinPresetAppliesCleanly) {
  for (const auto& name : registered_models()) {
    if (name == "preset_with_a_typo") continue;  // registered by the test above
    EXPECT_NO_THROW(config_for(name)) << name;
  }
}

TEST(Registry, ArchitecturesKnowTheirScheduleSizeAndFlops) {
  auto transformer = config_for("transformer_small");
  auto rnn = config_for("rnn_bahdanau_small");
  EXPECT_EQ(arch_spec("transformer_small").model_dim(transformer.model), 256);
  EXPECT_EQ(arch_spec("rnn_bahdanau_small").model_dim(rnn.model), 512);  // hidden_dim
  // One sentence, one token each side, no attention cost beyond the products: the Transformer's
  // FLOPs grow linearly in the number of rows.
  BatchShape one{1, 4, 5, 4, 5};
  BatchShape two{2, 4, 5, 8, 10};
  const double flops_one = training_flops(transformer.model, 8000, one);
  EXPECT_GT(flops_one, 0);
  EXPECT_DOUBLE_EQ(training_flops(transformer.model, 8000, two), 2 * flops_one);
  EXPECT_DOUBLE_EQ(training_flops(rnn.model, 8000, two), 2 * training_flops(rnn.model, 8000, one));
  EXPECT_DOUBLE_EQ(training_flops(transformer.model, 8000, one),
                   3 * arch_spec("transformer").forward_flops(transformer.model, 8000, one));
}

TEST(Registry, InconsistentModelKeysAreConfigErrors) {
  EXPECT_THROW(config_for("transformer_small", {"model.heads=5"}), ConfigError);
  EXPECT_THROW(config_for("rnn_bahdanau_small", {"model.attention=dot"}), ConfigError);
  EXPECT_THROW(config_for("rnn_bahdanau", {"model.share_embeddings=decoder"}), ConfigError);
  try {
    config_for("rnn_bahdanau_small", {"model.attention=none", "model.attention_query=conditional"});
    ADD_FAILURE() << "a conditional decoder without attention was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.attention_query"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'conditional' needs attention"), std::string::npos)
        << e.what();
  }
}

// The conditional decoder's first cell reads E y_{i-1} alone and its second reads c_i from s'_i:
// one n x n recurrent matrix (and two biases) more than Bahdanau's cell per step, in parameters
// and in FLOPs.
TEST(Registry, ConditionalDecoderCostsOneRecurrentMatrixMore) {
  auto previous = config_for("rnn_bahdanau_small");
  auto conditional = config_for("rnn_bahdanau_small", {"model.attention_query=conditional"});
  const int64_t n = std::stoll(previous.model.arch_options.at("hidden_dim"));
  const VocabSizes vocab{8000, 8000, true};
  EXPECT_EQ(count_parameters(*build_model(conditional.model, vocab)),
            count_parameters(*build_model(previous.model, vocab)) + 3 * n * n + 6 * n);
  const BatchShape shape{2, 4, 5, 8, 10};  // 2 sentences, 5 decoder steps each
  EXPECT_DOUBLE_EQ(
      training_flops(conditional.model, 8000, shape) - training_flops(previous.model, 8000, shape),
      3.0 * 2 * 5 * (2.0 * 3 * n * n));
}

}  // namespace
}  // namespace nmtzoo
