// SPDX-License-Identifier: MIT
// Multilingual runs (data.directions): one joint tokenizer with target-language tags, every
// direction's pairs with their tag, and decoding that asks for a target language.
#include <gtest/gtest.h>

#include <sstream>

#include "libtorch/search/translation_pipeline.h"
#include "libtorch/train/engine.h"
#include "libtorch/train/training_data.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/binary_dataset.h"
#include "torch_free/data/dataset_prepare.h"
#include "torch_free/data/translation_input.h"
#include "torch_free/metrics/bleu.h"

namespace nmtzoo {
namespace {

using testing::TinyRun;

std::vector<int32_t> concatenated(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> ids = a;
  ids.insert(ids.end(), b.begin(), b.end());
  return ids;
}

TEST(Multilingual, OneTokenizerForEveryLanguageWithATagPieceForEachTarget) {
  TinyRun run("transformer");
  const RunConfig config = run.multilingual_config();
  const Tokenizers tokenizers = load_tokenizers(config);
  EXPECT_TRUE(tokenizers.joint());
  ASSERT_TRUE(tokenizers.tags.tagged);
  EXPECT_EQ(tokenizers.tags.targets(), "dup, tgt");
  for (const std::string lang : {"tgt", "dup"}) {
    const auto& prefix = tokenizers.tags.prefix(lang);
    ASSERT_EQ(prefix.size(), 1u);
    EXPECT_EQ(tokenizers.src->piece(prefix[0]), "<2" + lang + ">");
  }
  // A bilingual run knows its one target and tags nothing.
  const Tokenizers bilingual = load_tokenizers(run.config());
  EXPECT_FALSE(bilingual.tags.tagged);
  EXPECT_TRUE(bilingual.tags.prefix("").empty());
  EXPECT_TRUE(bilingual.tags.prefix("tgt").empty());
  EXPECT_THROW(bilingual.tags.prefix("dup"), std::invalid_argument);
}

TEST(Multilingual, EveryDirectionsPairsAreTaggedWithTheirTarget) {
  TinyRun run("transformer");
  const RunConfig config = run.multilingual_config();
  const Tokenizers tokenizers = load_tokenizers(config);
  std::ostringstream log;
  const DatasetManifest manifest = prepare_dataset(config, tokenizers, log, {2, false, false});
  ASSERT_EQ(manifest.corpora.size(), 2u);
  EXPECT_EQ(manifest.corpora[0].split, "train src-tgt");
  EXPECT_EQ(manifest.corpora[1].split, "train src-dup");
  EXPECT_EQ(manifest.valid_pairs, 80);  // both directions' validation sets
  BinaryDataset train(config.dataset_dir(), "train", tokenizers.src->vocab_size(),
                      tokenizers.tgt->vocab_size());
  const auto sources = read_parallel(run.path("data/train.src"), run.path("data/train.dup"));
  for (size_t c = 0; c < 2; ++c) {
    const int64_t first = manifest.corpora[c].begin;
    const auto pair = train.pairs({first});
    const std::string target = c == 0 ? "tgt" : "dup";
    EXPECT_EQ(std::vector<int32_t>(pair[0].src.begin(), pair[0].src.end()),
              concatenated(
                  tokenizers.tags.prefix(target),
                  tokenizers.src->encode(sources.src[static_cast<size_t>(train.line(first) - 1)])));
  }
  EXPECT_EQ(train.tgt_text(manifest.corpora[1].begin),
            sources.tgt[static_cast<size_t>(train.line(manifest.corpora[1].begin) - 1)]);
  // Training reads a corpus a direction, each with its training corpus's weight.
  const TrainingData data = prepare_training_data(config, log);
  ASSERT_EQ(data.corpora.size(), 2u);
  EXPECT_EQ(data.valid.src.size(), 80u);
  EXPECT_EQ(data.valid.src[0][0], tokenizers.tags.prefix("tgt")[0]);
  EXPECT_EQ(data.valid.src[40][0], tokenizers.tags.prefix("dup")[0]);
  // Validation decodes each pair into its reference's language, from the plain source.
  ASSERT_EQ(data.valid_requests.size(), 80u);
  EXPECT_EQ(data.valid_requests[0].target_lang, "tgt");
  EXPECT_EQ(data.valid_requests[39].target_lang, "tgt");
  EXPECT_EQ(data.valid_requests[40].target_lang, "dup");
  EXPECT_EQ(data.valid_requests[79].target_lang, "dup");
  EXPECT_EQ(data.valid_requests[40].source, data.valid_requests[0].source);
  EXPECT_EQ(data.valid_references[40].size(), 2 * data.valid_references[0].size() + 1);
}

// A one-to-many model has no default target: validation must ask each pair for its reference's
// language, as the validation BLEU of a many-to-one model needs no tag.
TEST(Multilingual, ValidationBleuScoresEachDirectionInItsOwnTargetLanguage) {
  TinyRun run("transformer", {"training.valid_beam=2", "decoding.beam=2"});
  const RunConfig config = run.multilingual_config();
  ASSERT_TRUE(config.training.valid_bleu);
  std::ostringstream log;
  const TrainingData data = prepare_training_data(config, log);
  TrainingEngine engine(config, data, torch::kCPU, nullptr, log);
  const auto batches = epoch_batches(data, config.training.max_tokens, 1, 0);
  for (size_t i = 0; i < 30; ++i) engine.train_step({batches[i % batches.size()]});
  const ValidationResult result = engine.validate();

  // The same score from the validation files, each direction decoded into its target.
  std::vector<TranslationRequest> requests;
  std::vector<std::string> references;
  for (const std::string target : {"tgt", "dup"}) {
    const auto pairs = read_parallel(run.path("data/valid.src"), run.path("data/valid." + target));
    for (size_t i = 0; i < pairs.src.size(); ++i)
      requests.push_back({pairs.src[i], {}, {}, target});
    references.insert(references.end(), pairs.tgt.begin(), pairs.tgt.end());
  }
  TranslationPipeline translator(engine.model(), load_tokenizers(config),
                                 SearchOptions(config.decoding), torch::kCPU);
  std::vector<std::string> hypotheses;
  for (auto& translation : translator.translate(requests))
    hypotheses.push_back(translation.texts[0]);
  ASSERT_EQ(hypotheses.size(), 80u);
  EXPECT_GE(result.bleu, 0.0);
  EXPECT_DOUBLE_EQ(result.bleu, Bleu().corpus_score(hypotheses, {references}).score);
}

TEST(Multilingual, TheConfigIsCheckedForDirectionsItCannotTrain) {
  TinyRun run("transformer");
  auto problem = [&](const std::vector<std::string>& overrides) {
    RunConfig config = run.config();
    apply_overrides(config, overrides);
    try {
      check_config(config);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(none)");
  };
  EXPECT_NE(problem({"data.directions=[src-tgt, src]"})
                .find("data.directions has 'src-', which is not two different language codes"),
            std::string::npos)
      << problem({"data.directions=[src-tgt, src]"});
  EXPECT_NE(
      problem({"data.directions=[src-tgt, src-tgt]"}).find("data.directions lists 'src-tgt' twice"),
      std::string::npos);
  EXPECT_NE(problem({"data.directions=[src-tgt, src-dup]", "tokenizer.joint=false"})
                .find("needs tokenizer.joint: true"),
            std::string::npos);
  EXPECT_NE(problem({"data.directions=[src-tgt, src-dup]", "tokenizer.sampling_alpha=0.1"})
                .find("would lose their"),
            std::string::npos);
  EXPECT_EQ(problem({"data.directions=[src-tgt, src-dup]"}), "(none)");
}

TEST(Multilingual, TheTargetComesFromTheRequestOrTheDefaultNeverFromTheText) {
  TinyRun run("transformer");
  const RunConfig config = run.multilingual_config();
  const Tokenizers tokenizers = load_tokenizers(config);
  const std::vector<int32_t> words = tokenizers.src->encode("alpha bravo");
  const std::vector<int32_t>& tgt = tokenizers.tags.prefix("tgt");
  const std::vector<int32_t>& dup = tokenizers.tags.prefix("dup");
  EXPECT_EQ(source_ids(tokenizers, {"alpha bravo", {}, {}, "dup"}, "", 1),
            concatenated(dup, words));
  EXPECT_EQ(source_ids(tokenizers, {"alpha bravo", {}, {}, {}}, "tgt", 1),
            concatenated(tgt, words));
  // A tag in the text would be the control token: refused wherever it stands, not obeyed.
  for (const char* text : {"<2dup> alpha bravo", "alpha <2tgt>"}) {
    try {
      source_ids(tokenizers, {text, {}, {}, "tgt"}, "", 4);
      FAIL() << text;
    } catch (const UnusableGuide& e) {
      EXPECT_EQ(e.field, "source");
      EXPECT_NE(std::string(e.what()).find("line 4: the text holds <2"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_TRUE(source_ids(tokenizers, {"", {}, {}, "dup"}, "", 1).empty());
  try {
    source_ids(tokenizers, {"alpha", {}, {}, {}}, "", 7);
    FAIL() << "no target, two known";
  } catch (const UnusableGuide& e) {
    EXPECT_EQ(e.field, "target");
    EXPECT_EQ(std::string(e.what()), "line 7: the model translates into dup, tgt: say which");
  }
  try {
    source_ids(tokenizers, {"alpha", {}, {}, "fr"}, "tgt", 3);
    FAIL() << "an unknown target";
  } catch (const UnusableGuide& e) {
    EXPECT_EQ(std::string(e.what()), "line 3: the model translates into dup, tgt, not 'fr'");
  }
  // A bilingual model reads a tag-like start as text, and refuses another target.
  const Tokenizers bilingual = load_tokenizers(run.config());
  EXPECT_EQ(source_ids(bilingual, {"alpha bravo", {}, {}, "tgt"}, "", 1),
            bilingual.src->encode("alpha bravo"));
  EXPECT_THROW(source_ids(bilingual, {"alpha", {}, {}, "dup"}, "", 1), UnusableGuide);
}

TEST(Multilingual, AJsonlLineMayNameItsTarget) {
  EXPECT_EQ(parse_request(R"({"src": "ein Hund", "target": "fr"})", InputFormat::kJsonl, "in:1")
                .target_lang,
            "fr");
  EXPECT_EQ(parse_request(R"({"src": "ein Hund"})", InputFormat::kJsonl, "in:1").target_lang, "");
  try {
    parse_request(R"({"src": "ein Hund", "tgt": "fr"})", InputFormat::kJsonl, "in:2");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "in:2: unknown field \"tgt\" (expected src, target, prefix, constraints)");
  }
}

}  // namespace
}  // namespace nmtzoo
