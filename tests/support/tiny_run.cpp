// SPDX-License-Identifier: MIT
#include "tests/support/tiny_run.h"

#include <torch/torch.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/trained_model.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo::testing {

SyntheticTask reversal_task(size_t pairs, uint64_t seed, size_t max_words) {
  static const std::vector<std::string> words{"alpha",   "bravo", "charlie", "delta", "echo",
                                              "foxtrot", "golf",  "hotel",   "india", "juliet"};
  std::mt19937_64 rng(seed);
  SyntheticTask task;
  for (size_t i = 0; i < pairs; ++i) {
    size_t length = 2 + rng() % (max_words - 1);
    std::vector<std::string> sentence;
    for (size_t w = 0; w < length; ++w) sentence.push_back(words[rng() % words.size()]);
    std::string src, tgt;
    for (size_t w = 0; w < length; ++w) {
      src += (w ? " " : "") + sentence[w];
      tgt += (w ? " " : "") + sentence[length - 1 - w];
    }
    task.src.push_back(src);
    task.tgt.push_back(tgt);
  }
  return task;
}

namespace {

void write_split(const TempDir& dir, const std::string& split, const SyntheticTask& task) {
  std::string src, tgt;
  for (size_t i = 0; i < task.src.size(); ++i) {
    src += task.src[i] + "\n";
    tgt += task.tgt[i] + "\n";
  }
  write_text(dir.path("data/" + split + ".src"), src);
  write_text(dir.path("data/" + split + ".tgt"), tgt);
}

}  // namespace

TinyRun::TinyRun(const std::string& arch, const std::vector<std::string>& overrides,
                 size_t train_pairs) {
  std::filesystem::create_directories(dir_.path("data"));
  write_split(dir_, "train", reversal_task(train_pairs, 1));
  write_split(dir_, "valid", reversal_task(40, 2));
  write_split(dir_, "test", reversal_task(30, 3));
  std::ostringstream yaml;
  yaml << "data:\n  dir: " << dir_.path("data") << "\n  src_lang: src\n  tgt_lang: tgt\n"
       << "  train: train\n  valid: valid\n  test: [test]\n  max_len: 40\n"
       << "tokenizer:\n  vocab_size: 40\n  prefix: " << dir_.path("spm") << "\n"
       << "model:\n  arch: " << arch << "\n  d_model: 32\n  heads: 2\n  ffn_dim: 64\n"
       << "  encoder_layers: 1\n  decoder_layers: 1\n  dropout: 0.0\n  max_positions: 64\n"
       << "  emb_dim: 32\n  hidden_dim: 32\n  attention_dim: 32\n  readout_dim: 32\n"
       << "training:\n  output_dir: " << dir_.path("run") << "\n  device: cpu\n  threads: 1\n"
       << "  max_tokens: 400\n  lr: 0.003\n  warmup_steps: 50\n  valid_every: 50\n"
       << "  label_smoothing: 0.0\n  log_every: 10\n"
       << "decoding:\n  beam: 3\n  max_len_a: 1.2\n  max_len_b: 5\n";
  config_path_ = dir_.path("run.yaml");
  write_text(config_path_, yaml.str());
  config_ = load_config(config_path_, overrides);
  check_run_config(config_);
  // The file the apps read holds the overrides too.
  save_config(config_, resolve_arch(config_.model.arch), config_path_);
  std::ostringstream log;
  prepare_tokenizers(config_, log);
}

std::string TinyRun::save_untrained_checkpoint(const std::string& name) const {
  return save_untrained_checkpoint(config_, name);
}

void make_activations_overflow(EncoderDecoder& model) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.parameters()) parameter.mul_(1e38);
}

std::string TinyRun::save_untrained_checkpoint(const RunConfig& config,
                                               const std::string& name) const {
  Tokenizers tokenizers = load_tokenizers(config);
  torch::manual_seed(1);
  auto model = build_model(config.model, {tokenizers.src->vocab_size(),
                                          tokenizers.tgt->vocab_size(), tokenizers.joint()});
  std::string path = dir_.path(name);
  save_checkpoint(path, config, *model, nullptr, TrainingProgress{}, tokenizers);
  return path;
}

RunConfig TinyRun::multilingual_config() const {
  for (const std::string split : {"train", "valid", "test"}) {
    std::istringstream targets(read_text(dir_.path("data/" + split + ".tgt")));
    std::string doubled;
    for (std::string line; std::getline(targets, line);) {
      std::istringstream words(line);
      std::string text;
      for (std::string word; words >> word;) text += (text.empty() ? "" : " ") + word + " " + word;
      doubled += text + "\n";
    }
    write_text(dir_.path("data/" + split + ".dup"), doubled);
  }
  const std::string path = dir_.path("multi.yaml");
  RunConfig config = config_;
  apply_overrides(
      config, {"data.directions=[src-tgt, src-dup]", "tokenizer.prefix=" + dir_.path("spm_multi"),
               "training.output_dir=" + dir_.path("multi_run")});
  check_run_config(config);
  save_config(config, resolve_arch(config.model.arch), path);
  std::ostringstream log;
  prepare_tokenizers(config, log);
  return config;
}

}  // namespace nmtzoo::testing
