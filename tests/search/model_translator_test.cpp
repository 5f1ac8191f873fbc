#include "core/search/model_translator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <filesystem>

#include "core/config/loader.h"
#include "core/config/schema.h"
#include "core/runtime/runtime.h"
#include "core/runtime/trained_model.h"
#include "models/encoder_decoder.h"
#include "tests/support/tiny_run.h"

namespace nmtzoo {
namespace {

TEST(ModelTranslator, KeepsOrderAndGivesEmptyLinesEmptyTranslations) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  SearchOptions options;
  options.beam = 2;
  options.batch_tokens = 16;  // several batches
  ModelTranslator translator(*trained.model, trained.tokenizers, options, torch::kCPU);
  std::vector<std::string> lines{"alpha bravo", "", "charlie delta echo foxtrot golf", "", "india"};
  auto translations = translator.translate(lines);
  ASSERT_EQ(translations.size(), lines.size());
  EXPECT_EQ(translations[1].texts, std::vector<std::string>{""});
  EXPECT_TRUE(translations[1].nbest.empty());
  // Each line's translation is what translating it alone gives.
  for (size_t i : {0, 2, 4}) {
    auto alone = translator.translate({lines[i]});
    EXPECT_EQ(alone[0].texts, translations[i].texts) << "line " << i;
    EXPECT_FALSE(translations[i].nbest.empty());
  }
}

TEST(ModelTranslator, Bf16DecodingStaysInsideTheTranslatorAndKeepsLineCounts) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  std::vector<std::string> lines{"alpha bravo", "", "charlie delta echo"};
  SearchOptions options;
  ModelTranslator float32(*trained.model, trained.tokenizers, options, torch::kCPU);
  auto before = float32.translate(lines);
  options.dtype = DecodeDtype::kBf16;
  auto bf16 = ModelTranslator(*trained.model, trained.tokenizers, options, torch::kCPU).translate(lines);
  ASSERT_EQ(bf16.size(), lines.size());
  EXPECT_TRUE(bf16[1].nbest.empty());
  EXPECT_FALSE(bf16[0].nbest.empty());
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
  auto after = float32.translate(lines);
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(before[i].texts, after[i].texts) << "line " << i;
}

TEST(SearchOptions, DtypeComesFromDecodingDtypeOrTheOlderBf16Switch) {
  RunConfig config = default_config();
  EXPECT_EQ(SearchOptions(config.decoding).dtype, DecodeDtype::kFloat32);
  apply_overrides(config, {"decoding.dtype=int8"});
  EXPECT_EQ(SearchOptions(config.decoding).dtype, DecodeDtype::kInt8);
  apply_overrides(config, {"decoding.bf16=true"});
  EXPECT_THROW(SearchOptions(config.decoding), std::invalid_argument);
  apply_overrides(config, {"decoding.dtype=float32"});
  EXPECT_EQ(SearchOptions(config.decoding).dtype, DecodeDtype::kBf16);
  EXPECT_THROW(apply_overrides(config, {"decoding.dtype=int4"}), std::exception);
}

// The search reads the schema's decoding section itself: its defaults are the schema's.
TEST(SearchOptions, DefaultsAreTheSchemasDecodingDefaults) {
  const SearchOptions options;
  const RunConfig config = default_config();
  RunConfig from_options;
  from_options.decoding = options;
  EXPECT_EQ(section_fingerprint(from_options, "decoding"), section_fingerprint(config, "decoding"));
  EXPECT_FALSE(options.record_attention);
}

TEST(ModelTranslator, TruncatesOverlongLinesInsteadOfFailing) {
  testing::TinyRun run("rnn_bahdanau");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  ModelTranslator translator(*trained.model, trained.tokenizers, SearchOptions{}, torch::kCPU);
  std::string long_line;
  for (int i = 0; i < 200; ++i) long_line += "alpha ";
  auto translations = translator.translate({long_line, "bravo"});
  EXPECT_TRUE(translations[0].truncated);
  EXPECT_EQ(translations[0].source_tokens, translator.max_source_tokens());
  EXPECT_FALSE(translations[1].truncated);
}

TEST(TrainedModel, TheEmbeddedTokenizerWinsOverAChangedFileOfTheSamePath) {
  testing::TinyRun run("transformer");
  std::string checkpoint = run.save_untrained_checkpoint();
  const std::string trained_with = load_trained_model(checkpoint, torch::kCPU).tokenizers.src->serialized();
  testing::TinyRun other("transformer", {"tokenizer.vocab_size=36"});
  std::filesystem::copy_file(other.config().tokenizer_model("src"), run.config().tokenizer_model("src"),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(load_trained_model(checkpoint, torch::kCPU).tokenizers.src->serialized() == trained_with);
}

TEST(TrainedModel, MissingOrCorruptCheckpointIsAClearError) {
  testing::TempDir dir;
  EXPECT_THROW(load_trained_model(dir.path("none.pt"), torch::kCPU), std::runtime_error);
  testing::write_text(dir.path("bad.pt"), "garbage");
  try {
    load_trained_model(dir.path("bad.pt"), torch::kCPU);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a readable nmtzoo checkpoint"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nmtzoo
