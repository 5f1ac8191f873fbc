// SPDX-License-Identifier: MIT
#include "libtorch/search/translation_pipeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/runtime/trained_model.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"
#include "torch_free/config/schema.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

TEST(TranslationPipeline, KeepsOrderAndGivesEmptyLinesEmptyTranslations) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  SearchOptions options;
  options.beam = 2;
  options.batch_tokens = 16;  // several batches
  TranslationPipeline translator(*trained.model, trained.tokenizers, options, torch::kCPU);
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

TEST(TranslationPipeline, Bf16DecodingStaysInsideTheTranslatorAndKeepsLineCounts) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  std::vector<std::string> lines{"alpha bravo", "", "charlie delta echo"};
  SearchOptions options;
  TranslationPipeline float32(*trained.model, trained.tokenizers, options, torch::kCPU);
  auto before = float32.translate(lines);
  options.dtype = DecodeDtype::kBf16;
  auto bf16 = TranslationPipeline(*trained.model, trained.tokenizers, options, torch::kCPU)
                  .translate(lines);
  ASSERT_EQ(bf16.size(), lines.size());
  EXPECT_TRUE(bf16[1].nbest.empty());
  EXPECT_FALSE(bf16[0].nbest.empty());
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
  auto after = float32.translate(lines);
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(before[i].texts, after[i].texts) << "line " << i;
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

TEST(TranslationPipeline, TruncatesOverlongLinesInsteadOfFailing) {
  testing::TinyRun run("rnn_bahdanau");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  TranslationPipeline translator(*trained.model, trained.tokenizers, SearchOptions{}, torch::kCPU);
  std::string long_line;
  for (int i = 0; i < 200; ++i) long_line += "alpha ";
  auto translations = translator.translate({long_line, "bravo"});
  EXPECT_TRUE(translations[0].truncated);
  EXPECT_EQ(translations[0].source_tokens, translator.max_source_tokens());
  EXPECT_FALSE(translations[1].truncated);
}

// A prefix forced past the decoder's positions ran into the length limit, where nothing but EOS
// is allowed: no hypothesis survived and the line came out empty with no word. It is refused
// naming the line; the longest prefix that fits is the output.
TEST(TranslationPipeline, APrefixLongerThanTheModelCanOutputIsRefusedNamingTheLine) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  TranslationPipeline translator(*trained.model, trained.tokenizers, SearchOptions{}, torch::kCPU);
  const int64_t fits = trained.model->max_positions() - 1;
  auto tokens_of = [&](const std::string& text) {
    return static_cast<int64_t>(trained.tokenizers.tgt->encode(text).size());
  };
  std::string prefix = "alpha";  // the most words of "alpha" that fit, then one more
  while (tokens_of(prefix + " alpha") <= fits) prefix += " alpha";
  const std::string longer = prefix + " alpha";
  std::vector<TranslationRequest> requests{{"alpha bravo", "", {}, {}},
                                           {"charlie", longer, {}, {}}};
  try {
    translator.translate(requests, 7);
    FAIL() << "a prefix of " << tokens_of(longer) << " tokens was accepted";
  } catch (const UnusableGuide& e) {
    EXPECT_EQ(e.line, 8);
    EXPECT_EQ(e.field, "prefix");
    const std::string what = e.what();
    EXPECT_EQ(
        what.rfind(
            fmt::format("line 8: the prefix has {} tokens, more than the {} the model can output",
                        tokens_of(longer), fits),
            0),
        0u)
        << what;
  }
  requests[1].prefix = prefix;
  const auto translations = translator.translate(requests, 7);
  ASSERT_EQ(translations[1].nbest.size(), 1u);
  const std::vector<int32_t> forced = trained.tokenizers.tgt->encode(prefix);
  const auto& output = translations[1].nbest[0].tokens;
  ASSERT_GE(output.size(), forced.size());
  EXPECT_TRUE(std::equal(forced.begin(), forced.end(), output.begin()));
  EXPECT_FALSE(translations[1].empty_by_limit);
}

// min_len above a line's output length limit could never be met (the limit forces EOS, min_len
// forbade it): the line came out empty. It is lowered to the line's limit, and said.
TEST(TranslationPipeline, AMinLenAboveALinesLengthLimitIsLoweredToItAndSaid) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  SearchOptions options;
  options.min_len = 60;
  options.beam = 2;
  std::string long_line = "alpha";
  for (int i = 0; i < 60; ++i) long_line += " bravo";
  TranslationPipeline translator(*trained.model, trained.tokenizers, options, torch::kCPU);
  const auto translations = translator.translate(std::vector<std::string>{"alpha", "", long_line});
  ASSERT_EQ(translations.size(), 3u);
  const Translation& short_line = translations[0];
  ASSERT_EQ(short_line.nbest.size(), 1u) << "the short line has an output";
  EXPECT_TRUE(short_line.min_len_lowered);
  EXPECT_LT(short_line.length_limit, 60);
  EXPECT_EQ(static_cast<int64_t>(short_line.nbest[0].tokens.size()), short_line.length_limit);
  EXPECT_NE(min_len_warning(short_line)
                .find(fmt::format("lowered to {} tokens", short_line.length_limit)),
            std::string::npos)
      << min_len_warning(short_line);
  EXPECT_FALSE(short_line.empty_by_limit);
  EXPECT_EQ(empty_output_warning(short_line), "");
  EXPECT_FALSE(translations[1].min_len_lowered) << "an empty line is not searched";
  // A source long enough for a limit of 60 or more keeps min_len.
  const Translation& long_one = translations[2];
  EXPECT_GE(long_one.length_limit, 60);
  EXPECT_FALSE(long_one.min_len_lowered);
  EXPECT_EQ(min_len_warning(long_one), "");
  ASSERT_EQ(long_one.nbest.size(), 1u);
  EXPECT_GE(long_one.nbest[0].tokens.size(), 60u);
}

// A model that never ends a sentence: it gives EOS no probability, so at the length limit, where
// only EOS is allowed, every hypothesis is ruled out.
class NeverEndingModel : public EncoderDecoder {
 public:
  explicit NeverEndingModel(std::shared_ptr<EncoderDecoder> model) : model_(std::move(model)) {}
  DecoderState encode(const at::Tensor& src_tokens, const at::Tensor& src_pad_mask) override {
    return model_->encode(src_tokens, src_pad_mask);
  }
  at::Tensor decode_step(const at::Tensor& prev_tokens, DecoderState& state) override {
    at::Tensor log_probs = model_->decode_step(prev_tokens, state);
    log_probs.select(1, kEosId).fill_(-std::numeric_limits<float>::infinity());
    return log_probs;
  }
  at::Tensor features(const at::Tensor& src_tokens, const at::Tensor& src_pad_mask,
                      const at::Tensor& tgt_in) override {
    return model_->features(src_tokens, src_pad_mask, tgt_in);
  }
  at::Tensor output_layer(const at::Tensor& features) override {
    return model_->output_layer(features);
  }
  int64_t max_positions() const override { return model_->max_positions(); }

 private:
  std::shared_ptr<EncoderDecoder> model_;
};

TEST(TranslationPipeline, AnOutputTheLengthLimitLeftEmptyIsSaidNamingTheLimit) {
  testing::TinyRun run("transformer");
  TrainedModel trained = load_trained_model(run.save_untrained_checkpoint(), torch::kCPU);
  NeverEndingModel model(trained.model);
  SearchOptions options;
  options.beam = 2;
  TranslationPipeline translator(model, trained.tokenizers, options, torch::kCPU);
  const auto translations = translator.translate(std::vector<std::string>{"alpha bravo", ""});
  EXPECT_EQ(translations[0].texts, std::vector<std::string>{""});
  EXPECT_TRUE(translations[0].empty_by_limit);
  EXPECT_GT(translations[0].length_limit, 0);
  EXPECT_NE(
      empty_output_warning(translations[0])
          .find(fmt::format("output length limit of {} tokens", translations[0].length_limit)),
      std::string::npos)
      << empty_output_warning(translations[0]);
  EXPECT_FALSE(translations[1].empty_by_limit) << "an empty line is empty, not cut";
  EXPECT_EQ(empty_output_warning(translations[1]), "");
}

TEST(LimitWarnings, SayEveryEmptyOutputAndTheFirstLoweredMinLenOnly) {
  Translation lowered;
  lowered.length_limit = 7;
  lowered.min_len_lowered = true;
  Translation empty;
  empty.length_limit = 9;
  empty.empty_by_limit = true;
  LimitWarnings warnings;
  EXPECT_EQ(warnings.of(Translation{}, "in.txt:1"), "");
  EXPECT_EQ(warnings.of(lowered, "in.txt:2"), "warning: in.txt:2: " + min_len_warning(lowered) +
                                                  "; said once, later lines may be lowered too\n");
  EXPECT_EQ(warnings.of(lowered, "in.txt:3"), "") << "once per run";
  EXPECT_EQ(warnings.of(empty, "in.txt:4"),
            "warning: in.txt:4: " + empty_output_warning(empty) + "\n");
  EXPECT_EQ(warnings.of(empty, "in.txt:5"),
            "warning: in.txt:5: " + empty_output_warning(empty) + "\n");
}

TEST(TrainedModel, TheEmbeddedTokenizerWinsOverAChangedFileOfTheSamePath) {
  testing::TinyRun run("transformer");
  std::string checkpoint = run.save_untrained_checkpoint();
  const std::string trained_with =
      load_trained_model(checkpoint, torch::kCPU).tokenizers.src->serialized();
  testing::TinyRun other("transformer", {"tokenizer.vocab_size=36"});
  std::filesystem::copy_file(other.config().tokenizer_model("src"),
                             run.config().tokenizer_model("src"),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_TRUE(load_trained_model(checkpoint, torch::kCPU).tokenizers.src->serialized() ==
              trained_with);
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
