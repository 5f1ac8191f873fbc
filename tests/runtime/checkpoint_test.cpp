// SPDX-License-Identifier: MIT
// Checkpoints are verified on load and carry everything needed to translate.
#include "libtorch/runtime/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/translation_pipeline.h"
#include "tests/support/tiny_run.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;

bool same_weights(EncoderDecoder& a, EncoderDecoder& b) {
  auto theirs = b.named_parameters();
  for (const auto& item : a.named_parameters()) {
    if (!torch::equal(item.value(), *theirs.find(item.key()))) return false;
  }
  return true;
}

// A flipped byte anywhere in a checkpoint is an error or, where it hit no stored value (zip
// padding, say), harmless: a checkpoint never loads with other weights than were saved.
TEST(Checkpoint, AFlippedByteNeverLoadsSilentlyAsOtherWeights) {
  testing::TinyRun run("transformer");
  const std::string path = run.save_untrained_checkpoint();
  TrainedModel original = load_trained_model(path, torch::kCPU);
  const std::string bytes = testing::read_text(path);
  int checksum_errors = 0;
  for (size_t position = 7; position < bytes.size(); position += bytes.size() / 61) {
    std::string damaged = bytes;
    damaged[position] = static_cast<char>(damaged[position] ^ 0x10);
    testing::write_text(run.path("damaged.pt"), damaged);
    try {
      TrainedModel loaded = load_trained_model(run.path("damaged.pt"), torch::kCPU);
      EXPECT_TRUE(same_weights(*original.model, *loaded.model)) << "byte " << position;
    } catch (const std::exception& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(run.path("damaged.pt")), std::string::npos) << message;
      if (message.find("checksum mismatch in record") != std::string::npos) ++checksum_errors;
    }
  }
  // Most of the file is tensor data: most flips must be caught by the checksums.
  EXPECT_GT(checksum_errors, 40);
}

TEST(Checkpoint, EmbedsTheTokenizersAndTranslatesWithoutTheirFiles) {
  testing::TinyRun run("transformer");
  const std::string path = run.save_untrained_checkpoint();
  TrainedModel before = load_trained_model(path, torch::kCPU);
  TranslationPipeline translator_before(*before.model, before.tokenizers, SearchOptions{},
                                        torch::kCPU);
  const std::string expected = translator_before.translate({"alpha bravo"})[0].texts[0];
  fs::remove(run.config().tokenizer_model("src"));
  TrainedModel after = load_trained_model(path, torch::kCPU);
  EXPECT_EQ(after.tokenizers.src->serialized(), before.tokenizers.src->serialized());
  EXPECT_TRUE(after.tokenizers.joint());
  TranslationPipeline translator_after(*after.model, after.tokenizers, SearchOptions{},
                                       torch::kCPU);
  EXPECT_EQ(translator_after.translate({"alpha bravo"})[0].texts[0], expected);
}

TEST(Checkpoint, OldCheckpointsFindTheirTokenizerFromTheRunFolder) {
  RunConfig config = default_config();
  config.training.output_dir = "runs/tf";
  config.tokenizer.prefix = "runs/spm";
  config.data.src_lang = "de";
  EXPECT_EQ(
      resolve_tokenizer_prefix(config, "/data/project/runs/tf/checkpoints/checkpoint_best.pt"),
      "/data/project/runs/spm");
  // A checkpoint moved out of its run folder keeps the path as it was.
  EXPECT_EQ(resolve_tokenizer_prefix(config, "/elsewhere/checkpoint_best.pt"), "runs/spm");
  config.tokenizer.prefix = "/abs/spm";
  EXPECT_EQ(resolve_tokenizer_prefix(config, "/data/project/runs/tf/checkpoints/x.pt"), "/abs/spm");
}

}  // namespace
}  // namespace nmtzoo
