#include "core/runtime/trained_model.h"

#include <torch/torch.h>

#include <stdexcept>

#include "core/config/loader.h"
#include "core/runtime/checkpoint.h"
#include "models/encoder_decoder.h"

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

VocabSizes vocab_sizes(const Tokenizers& tokenizers) {
  return {tokenizers.src->vocab_size(), tokenizers.tgt->vocab_size(), tokenizers.joint()};
}

TrainedModel load_trained_model(const std::string& checkpoint_path, const c10::Device& device) {
  CheckpointInfo info = read_checkpoint_info(checkpoint_path);
  TrainedModel trained;
  trained.config = info.config;
  try {
    trained.tokenizers = load_tokenizers(info.config);
  } catch (const std::exception& e) {
    throw std::runtime_error("the tokenizer of checkpoint '" + checkpoint_path +
                             "' cannot be loaded: " + e.what());
  }
  if (tokenizer_fingerprint(info.config) != info.tokenizer_fingerprint) {
    throw std::runtime_error("tokenizer '" + info.config.tokenizer_model(info.config.data.src_lang) +
                             "' is not the one checkpoint '" + checkpoint_path +
                             "' was trained with (its contents changed)");
  }
  trained.model = build_model(info.config.model, vocab_sizes(trained.tokenizers));
  load_checkpoint_state(checkpoint_path, *trained.model);
  trained.model->to(device);
  trained.model->eval();
  return trained;
}

}  // namespace nmtzoo
