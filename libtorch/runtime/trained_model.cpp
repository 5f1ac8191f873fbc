// SPDX-License-Identifier: MIT
#include "libtorch/runtime/trained_model.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/checkpoint.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {

void apply_model_preset(RunConfig& config) {
  std::vector<std::string> chain;
  try {
    chain = preset_chain(config.model.arch);
  } catch (const std::invalid_argument& e) {
    throw ConfigError({config.where("model.arch") + ": model.arch " + e.what()});
  }
  std::vector<std::string> problems;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const auto& [key, value] : preset_values(*it)) {
      std::string error = set_default_option(config, "model." + key, value, "preset " + *it);
      if (!error.empty()) problems.push_back("preset " + *it + ": " + error);
    }
  }
  for (const auto& problem : arch_spec(config.model.arch).check(config.model)) {
    problems.push_back(config.where("model." + problem.key) + ": model." + problem.key + " " +
                       problem.message);
  }
  if (!problems.empty()) throw ConfigError(problems);
}

void check_run_config(RunConfig& config) {
  apply_model_preset(config);
  check_config(config);
}

VocabSizes vocab_sizes(const Tokenizers& tokenizers) {
  return {tokenizers.src->vocab_size(), tokenizers.tgt->vocab_size(), tokenizers.joint()};
}

std::string resolve_tokenizer_prefix(const RunConfig& config, const std::string& checkpoint_path) {
  namespace fs = std::filesystem;
  const fs::path prefix = config.tokenizer.prefix.empty() ? fs::path(config.run_dir()) / "spm"
                                                          : fs::path(config.tokenizer.prefix);
  std::error_code ec;
  if (prefix.is_absolute() || fs::exists(config.tokenizer_model(config.data.src_lang), ec)) {
    return prefix.string();
  }
  // <training folder>/<training.output_dir>/checkpoints/<file>
  fs::path root = fs::absolute(checkpoint_path, ec).parent_path().parent_path();
  const fs::path output_dir = fs::path(config.training.output_dir).lexically_normal();
  if (output_dir.is_absolute()) return prefix.string();
  std::vector<fs::path> components(output_dir.begin(), output_dir.end());
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    if (it->empty() || *it == ".") continue;
    if (root.filename() != *it) return prefix.string();
    root = root.parent_path();
  }
  return (root / prefix).string();
}

namespace {

Tokenizers checkpoint_tokenizers(const CheckpointInfo& info, const std::string& checkpoint_path) {
  if (!info.src_tokenizer_model.empty()) {
    auto src = std::make_shared<const SentencePiece>(SentencePiece::from_serialized(
        info.src_tokenizer_model, checkpoint_path + " (embedded source tokenizer)"));
    std::shared_ptr<const SentencePiece> tgt = src;
    if (!info.tgt_tokenizer_model.empty()) {
      tgt = std::make_shared<const SentencePiece>(SentencePiece::from_serialized(
          info.tgt_tokenizer_model, checkpoint_path + " (embedded target tokenizer)"));
    }
    return {src, tgt, target_tags(info.config, *src)};
  }
  // Format version 1: the models by path.
  RunConfig config = info.config;
  config.tokenizer.prefix = resolve_tokenizer_prefix(config, checkpoint_path);
  return load_tokenizers(config);
}

}  // namespace

TrainedModel load_trained_model(const std::string& checkpoint_path, const c10::Device& device) {
  CheckpointInfo info = read_checkpoint_info(checkpoint_path);
  TrainedModel trained;
  trained.config = info.config;
  try {
    trained.tokenizers = checkpoint_tokenizers(info, checkpoint_path);
  } catch (const std::exception& e) {
    throw std::runtime_error("the tokenizer of checkpoint '" + checkpoint_path +
                             "' cannot be loaded: " + e.what());
  }
  if (tokenizer_fingerprint(trained.tokenizers) != info.tokenizer_fingerprint) {
    throw std::runtime_error("tokenizer '" + trained.tokenizers.src->path() +
                             "' is not the one checkpoint '" + checkpoint_path +
                             "' was trained with (its contents changed)");
  }
  trained.model = build_model(info.config.model, vocab_sizes(trained.tokenizers));
  load_checkpoint_state(checkpoint_path, *trained.model);
  trained.model->to(device);
  trained.model->eval();
  return trained;
}

std::string unrelated_models_problem(const TrainedModel& a, const TrainedModel& b) {
  auto directions = [](const RunConfig& config) {
    std::string names;
    for (const auto& pair : config.language_pairs())
      names += (names.empty() ? "" : ", ") + pair.name();
    return names;
  };
  if (directions(a.config) != directions(b.config)) {
    return fmt::format("translate different languages ({} and {})", directions(a.config),
                       directions(b.config));
  }
  const ModelConfig& ma = a.config.model;
  const ModelConfig& mb = b.config.model;
  const auto keys_a = arch_option_values(ma);
  const auto keys_b = arch_option_values(mb);
  if (resolve_arch(ma.arch) != resolve_arch(mb.arch) || keys_a != keys_b ||
      ma.encoder_layers != mb.encoder_layers || ma.decoder_layers != mb.decoder_layers) {
    return fmt::format("are different models ({} and {})", ma.arch, mb.arch);
  }
  for (const auto& [side, x, y] : {std::tuple{"source", a.tokenizers.src, b.tokenizers.src},
                                   std::tuple{"target", a.tokenizers.tgt, b.tokenizers.tgt}}) {
    if (!same_vocabulary(*x, *y)) {
      return fmt::format("have different {} vocabularies ({} and {} pieces, from {} and {})", side,
                         x->vocab_size(), y->vocab_size(), x->path(), y->path());
    }
  }
  return "";
}

}  // namespace nmtzoo
