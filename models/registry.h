// Architectures by name and their named presets (fairseq's register_model_architecture, as data).
//
// An architecture maps a ModelConfig to a model. A preset is a list of model-key values on top of
// a base (another preset or an architecture); applied, it fills only keys the YAML and --set
// left unset, most specific preset winning.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

class EncoderDecoder;
struct ModelConfig;
struct RunConfig;

struct VocabSizes {
  int64_t src = 0;
  int64_t tgt = 0;
  bool joint = false;  // one vocabulary for both sides (allows sharing all embeddings)
};

using ModelFactory =
    std::function<std::shared_ptr<EncoderDecoder>(const ModelConfig&, const VocabSizes&)>;
// Keys are model keys without the "model." prefix; values are YAML text.
using PresetValues = std::vector<std::pair<std::string, std::string>>;

// Both throw std::logic_error for a name registered twice.
void register_arch(const std::string& name, ModelFactory factory);
void register_preset(const std::string& name, const std::string& base, PresetValues values);

// Registers nmtzoo's architectures and presets; safe to call more than once.
void register_builtin_models();

std::vector<std::string> registered_models();  // architectures and presets, sorted
// The architecture a name resolves to through its preset chain; throws ConfigError if unknown.
std::string resolve_arch(const std::string& name);
// The preset's own values followed by its bases', for documentation.
const PresetValues& preset_values(const std::string& name);

// Fills model keys left unset from model.arch's presets, then checks the model keys together.
// Throws ConfigError naming model.arch's file and line, with the closest registered name.
void apply_model_preset(RunConfig& config);

// Builds the architecture of config.model.arch (presets applied beforehand).
std::shared_ptr<EncoderDecoder> build_model(const ModelConfig& config, const VocabSizes& vocab);

}  // namespace nmtzoo
