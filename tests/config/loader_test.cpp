// SPDX-License-Identifier: MIT
#include "torch_free/config/loader.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "libtorch/search/search.h"

#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

using testing::TempDir;

std::string write_config(const TempDir& dir, const std::string& yaml) {
  std::string path = dir.path("run.yaml");
  testing::write_text(path, yaml);
  return path;
}

// The message of the ConfigError thrown by loading `yaml` with `overrides`.
std::string load_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  TempDir dir;
  try {
    load_config(write_config(dir, yaml), overrides);
  } catch (const ConfigError& e) {
    std::string text = e.what();
    // Make the temporary path predictable for the assertions.
    for (size_t pos; (pos = text.find(dir.path("run.yaml"))) != std::string::npos;) {
      text.replace(pos, dir.path("run.yaml").size(), "run.yaml");
    }
    return text;
  }
  return "";
}

// The message of the ConfigError check_config throws for `config` ("" when it passes).
std::string check_error(const RunConfig& config) {
  try {
    check_config(config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsComeFromTheSchema) {
  RunConfig config = default_config();
  EXPECT_EQ(config.model.arch, "transformer_small");
  EXPECT_EQ(config.tokenizer.vocab_size, 8000);
  EXPECT_EQ(config.training.betas, (std::vector<double>{0.9, 0.98}));
  EXPECT_EQ(config.decoding.length_penalty, LengthPenalty::kAverage);
  EXPECT_TRUE(config.explicit_keys.empty());
}

TEST(Config, ReadsTypedValues) {
  TempDir dir;
  auto config = load_config(write_config(dir, R"(
data:
  src_lang: en
  tgt_lang: fr
  test: [test_2016_flickr]
tokenizer:
  model_type: unigram
  joint: false
model:
  arch: rnn_bahdanau
  attention: none
  dropout: 0.3
training:
  max_time: 1h30m
  betas: [0.9, 0.999]
decoding:
  length_penalty: wu
)"));
  EXPECT_EQ(config.data.tgt_lang, "fr");
  EXPECT_EQ(config.data.test, std::vector<std::string>{"test_2016_flickr"});
  EXPECT_EQ(config.tokenizer.model_type, SubwordModel::kUnigram);
  EXPECT_FALSE(config.tokenizer.joint);
  EXPECT_EQ(config.model.arch_options.at("attention"), "none");
  EXPECT_DOUBLE_EQ(config.model.dropout, 0.3);
  EXPECT_DOUBLE_EQ(config.training.max_time, 5400);
  EXPECT_EQ(config.decoding.length_penalty, LengthPenalty::kWu);
  EXPECT_TRUE(config.explicit_keys.count("model.dropout"));
  EXPECT_FALSE(config.explicit_keys.count("model.d_model"));
  EXPECT_EQ(config.origin.at("model.dropout"), dir.path("run.yaml") + ":12");
}

TEST(Config, UnknownKeyNamesLineAndSuggestion) {
  std::string error = load_error("model:\n  arch: transformer_small\n  d_modle: 256\n");
  EXPECT_NE(error.find("run.yaml:3"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key 'model.d_modle'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'model.d_model'"), std::string::npos) << error;
}

TEST(Config, KeyInTheWrongSectionSuggestsItsSection) {
  std::string error = load_error("training:\n  beam: 4\n");
  EXPECT_NE(error.find("did you mean 'decoding.beam'"), std::string::npos) << error;
}

TEST(Config, UnknownSectionIsRejected) {
  std::string error = load_error("modle:\n  d_model: 256\n");
  EXPECT_NE(error.find("run.yaml:1: unknown section 'modle'; did you mean 'model'?"),
            std::string::npos)
      << error;
}

TEST(Config, WrongTypeIsRejected) {
  std::string error = load_error("training:\n  warmup_steps: lots\n  valid_bleu: maybe\n");
  EXPECT_NE(error.find("run.yaml:2: training.warmup_steps expects an integer, got 'lots'"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("run.yaml:3: training.valid_bleu expects true or false, got 'maybe'"),
            std::string::npos)
      << error;
}

TEST(Config, OutOfRangeIsRejected) {
  std::string error = load_error("model:\n  dropout: 1.5\ndecoding:\n  beam: 0\n");
  EXPECT_NE(error.find("run.yaml:2: model.dropout 1.5 is out of range: expected in [0, 1)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("run.yaml:4: decoding.beam 0 is out of range"), std::string::npos) << error;
}

TEST(Config, BadChoiceListsTheChoices) {
  std::string error = load_error("model:\n  activation: swish\n");
  EXPECT_NE(error.find("expects one of relu, gelu, got 'swish'"), std::string::npos) << error;
}

TEST(Config, ReportsEveryProblemAtOnce) {
  TempDir dir;
  try {
    load_config(write_config(dir, "model:\n  dropout: 2\n  headz: 4\ntraining:\n  lr: fast\n"),
                {"decoding.beam=x"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems.size(), 4u) << e.what();
  }
}

TEST(Config, DuplicateKeyIsRejected) {
  std::string error = load_error("model:\n  dropout: 0.1\n  dropout: 0.2\n");
  EXPECT_NE(error.find("run.yaml:3: duplicate key 'model.dropout'"), std::string::npos) << error;
}

// yaml-cpp throws when such a key is converted to a string: the loader must catch it.
TEST(Config, ListOrMappingAsAKeyIsAConfigError) {
  EXPECT_EQ(load_error("[data]: {}\n"),
            "run.yaml:1: a key must be a name, not a list or a mapping");
  EXPECT_EQ(load_error("model:\n  ? {dropout: 0.1}\n  : 0.2\n  heads: 4\n"),
            "run.yaml:2: a key must be a name, not a list or a mapping");
}

TEST(Config, YamlSyntaxErrorNamesTheLine) {
  std::string error = load_error("model:\n  dropout: [0.1\n");
  EXPECT_NE(error.find("YAML syntax error"), std::string::npos) << error;
  EXPECT_NE(error.find("run.yaml:"), std::string::npos) << error;
}

TEST(Config, OverrideBeatsTheFile) {
  TempDir dir;
  auto config = load_config(write_config(dir, "training:\n  lr: 0.001\n"),
                            {"training.lr=0.0005", "data.test=[a, b]"});
  EXPECT_DOUBLE_EQ(config.training.lr, 0.0005);
  EXPECT_EQ(config.data.test, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(config.origin.at("training.lr"), "--set training.lr");
}

TEST(Config, BadOverrideIsRejectedWithSuggestion) {
  std::string error = load_error("", {"training.lrr=0.1"});
  EXPECT_NE(
      error.find("--set training.lrr: unknown key 'training.lrr'; did you mean 'training.lr'"),
      std::string::npos)
      << error;
  EXPECT_NE(load_error("", {"training.lr"}).find("expected key=value"), std::string::npos);
}

TEST(Config, MissingFileIsAClearError) {
  try {
    load_config("/nonexistent/run.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read config file '/nonexistent/run.yaml'"),
              std::string::npos);
  }
}

TEST(Config, PresetValuesFillOnlyUnsetKeys) {
  TempDir dir;
  auto config = load_config(write_config(dir, "model:\n  d_model: 128\n"));
  EXPECT_EQ(set_default_option(config, "model.d_model", "256", "preset"), "");
  EXPECT_EQ(set_default_option(config, "model.ffn_dim", "1024", "preset"), "");
  EXPECT_EQ(config.model.arch_options.at("d_model"), "128");
  EXPECT_EQ(config.model.arch_options.at("ffn_dim"), "1024");
  EXPECT_EQ(config.where("model.ffn_dim"), "preset");
  EXPECT_NE(set_default_option(config, "model.ffn_dim", "-1", "preset"), "");
}

TEST(Config, CrossKeyChecksNameTheKey) {
  TempDir dir;
  auto config = load_config(
      write_config(dir, "tokenizer:\n  joint: false\nmodel:\n  share_embeddings: all\n"));
  const std::string message = check_error(config);
  EXPECT_NE(message.find(dir.path("run.yaml") + ":4: model.share_embeddings"), std::string::npos)
      << message;
}

// One wording a rule, whoever checks it: the config (naming where the key was set), and the
// search options the library, the server and the Python module build (the server names the
// request field: tests/serve/server_test.cpp).
TEST(Config, ARuleBetweenKeysIsWordedOnceForEveryCaller) {
  RunConfig config = default_config();
  apply_overrides(config, {"decoding.beam=2", "decoding.nbest=3"});
  const std::vector<KeyProblem> problems = config.decoding.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].key, "nbest");
  EXPECT_EQ(problems[0].message, "(3) exceeds beam (2)");
  EXPECT_NE(check_error(config).find("decoding.nbest (3) exceeds beam (2)"), std::string::npos);
  try {
    SearchOptions options(config.decoding);
    ADD_FAILURE() << "search options with nbest above the beam";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "decoding.nbest (3) exceeds beam (2)");
  }
  apply_overrides(config, {"decoding.nbest=1", "decoding.bf16=true", "decoding.dtype=int8"});
  EXPECT_NE(check_error(config).find("decoding.bf16 is true but dtype is int8: set only dtype"),
            std::string::npos);
}

TEST(Config, BudgetDecayingSchedulesNeedABudget) {
  TempDir dir;
  const std::string message =
      check_error(load_config(write_config(dir, "training:\n  schedule: cosine\n  lr: 0.001\n")));
  EXPECT_NE(message.find(dir.path("run.yaml") + ":2: training.schedule decays the rate over the "
                                                "run's budget"),
            std::string::npos)
      << message;
  check_config(load_config(
      write_config(dir, "training:\n  schedule: linear\n  lr: 0.001\n  max_time: 60m\n")));
}

TEST(Config, BpeDropoutProbabilityMustBeBelowOne) {
  TempDir dir;
  const std::string message =
      check_error(load_config(write_config(dir, "tokenizer:\n  sampling_alpha: 1.5\n")));
  EXPECT_NE(message.find(dir.path("run.yaml") + ":2: tokenizer.sampling_alpha (1.5)"),
            std::string::npos)
      << message;
  // For a unigram model alpha is a smoothing exponent, not a probability.
  check_config(load_config(write_config(
      dir,
      "tokenizer:\n  model_type: unigram\n  sampling_alpha: 1.5\n  sampling_sides: source\n")));
  EXPECT_NE(load_error("tokenizer:\n  sampling_sides: left\n").find("one of source, target, both"),
            std::string::npos);
}

TEST(Config, WrittenYamlReadsBackToTheSameConfig) {
  TempDir dir;
  auto config = load_config(write_config(dir, "model:\n  attention: none\n  dropout: 0.25\n"),
                            {"data.test=[x y, z]", "training.max_time=50m"});
  save_config(config, "", dir.path("resolved.yaml"));
  auto again = load_config(dir.path("resolved.yaml"));
  EXPECT_EQ(to_yaml(again, ""), to_yaml(config, ""));
  EXPECT_EQ(again.data.test, (std::vector<std::string>{"x y", "z"}));
  EXPECT_EQ(again.explicit_keys.size(), config_schema().size());
}

TEST(Config, TrainingCorporaAreANameOrAWeightedList) {
  TempDir dir;
  auto single = load_config(write_config(dir, "data:\n  train: news\n"));
  EXPECT_EQ(single.data.train, (std::vector<TrainCorpus>{{"news", 1.0}}));
  auto several = load_config(write_config(dir, R"(
data:
  train:
    - news
    - {split: backtranslated, weight: 0.5}
    - split: europarl
      weight: 2
)"));
  EXPECT_EQ(several.data.train,
            (std::vector<TrainCorpus>{{"news", 1.0}, {"backtranslated", 0.5}, {"europarl", 2.0}}));
  save_config(several, "", dir.path("resolved.yaml"));
  EXPECT_EQ(load_config(dir.path("resolved.yaml")).data.train, several.data.train);
  EXPECT_EQ(
      load_config(write_config(dir, ""), {"data.train=[a, {split: b, weight: 3}]"}).data.train,
      (std::vector<TrainCorpus>{{"a", 1.0}, {"b", 3.0}}));
}

TEST(Config, BadTrainingCorporaNameTheProblem) {
  EXPECT_NE(load_error("data:\n  train: [a, {split: b, weight: 0}]\n")
                .find("run.yaml:2: data.train list item: weight: 0 is out of range: expected > 0"),
            std::string::npos)
      << load_error("data:\n  train: [a, {split: b, weight: 0}]\n");
  EXPECT_NE(load_error("data:\n  train: [a, {name: b}]\n").find("unknown key 'name' in a corpus"),
            std::string::npos);
  EXPECT_NE(load_error("data:\n  train: [a, a]\n").find("corpus 'a' is listed twice"),
            std::string::npos);
  EXPECT_NE(load_error("data:\n  train: []\n").find("expects at least one corpus"),
            std::string::npos);
  EXPECT_NE(load_error("data:\n  train: [{weight: 2}]\n").find("corpus 1 has no split name"),
            std::string::npos);
}

TEST(Config, ReferenceDocumentsEveryKey) {
  std::string reference = config_reference_markdown();
  for (const auto& option : config_schema()) {
    EXPECT_FALSE(option.help.empty()) << option.key;
    auto name = option.key.substr(option.key.find('.') + 1);
    EXPECT_NE(reference.find("| `" + name + "` |"), std::string::npos) << option.key;
  }
}

TEST(Config, CommittedReferenceIsUpToDate) {
  std::string committed = testing::read_text(NMTZOO_SOURCE_DIR "/docs/config.md");
  EXPECT_EQ(committed, config_reference_markdown())
      << "regenerate with: build/bin/nmtzoo-config --reference > docs/config.md";
}

}  // namespace
}  // namespace nmtzoo
