// SPDX-License-Identifier: MIT
// A complete miniature run on a synthetic task, for tests of apps, translation and training:
// corpus files, a trained SentencePiece model, a config, and optionally a checkpoint.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "torch_free/config/config.h"

namespace nmtzoo {
class EncoderDecoder;
}

namespace nmtzoo::testing {

// Every weight of `model` multiplied by 1e38, so that its activations overflow and its scores
// become NaN or infinite (the search's and the apps' overflow tests).
void make_activations_overflow(EncoderDecoder& model);

// Sentences of 2..max_words words from a small fixed word list; the target reverses the words.
struct SyntheticTask {
  std::vector<std::string> src;
  std::vector<std::string> tgt;
};
SyntheticTask reversal_task(size_t pairs, uint64_t seed, size_t max_words = 6);

class TinyRun {
 public:
  // Writes train/val/test files under a temporary folder and a config using `arch` (an arch or
  // preset name) with tiny sizes; `overrides` are --set style. Trains the tokenizer.
  explicit TinyRun(const std::string& arch = "transformer",
                   const std::vector<std::string>& overrides = {}, size_t train_pairs = 400);
  const RunConfig& config() const { return config_; }
  const std::string& config_path() const { return config_path_; }
  std::string path(const std::string& name) const { return dir_.path(name); }
  // Saves an untrained (randomly initialised) model as a checkpoint and returns its path.
  std::string save_untrained_checkpoint(const std::string& name = "untrained.pt") const;
  // The run made multilingual: a third language "dup" (each target word doubled) beside tgt,
  // data.directions [src-tgt, src-dup], and its own joint tokenizer (prefix spm_multi) with the
  // target tags, trained; the config is saved as multi.yaml.
  RunConfig multilingual_config() const;
  // An untrained model of `config` (with its tokenizers) saved as <folder>/`name`.
  std::string save_untrained_checkpoint(const RunConfig& config, const std::string& name) const;

 private:
  TempDir dir_;
  std::string config_path_;
  RunConfig config_;
};

}  // namespace nmtzoo::testing
