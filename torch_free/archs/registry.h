// SPDX-License-Identifier: MIT
// Architectures by name and their named presets (fairseq's register_model_architecture, as data).
//
// An architecture is one registry entry holding everything the rest of nmtzoo needs to know about
// it: its own model keys, how to build it from a ModelConfig, which combinations of model keys it
// refuses, the size the learning-rate schedule scales by, and its FLOPs per batch. A preset is a
// list of model-key values on top of a base (another preset or an architecture); applied
// (libtorch/runtime), it fills only keys the YAML and --set left unset, most specific preset
// winning. Adding an architecture touches torch_free/archs/ (its keys, checks, presets) and
// libtorch/models/ (its module and builder) only. No LibTorch in this header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "torch_free/common/arch_options.h"
#include "torch_free/common/model_config.h"

namespace nmtzoo {

class EncoderDecoder;

struct VocabSizes {
  int64_t src = 0;
  int64_t tgt = 0;
  bool joint = false;  // one vocabulary for both sides (allows sharing all embeddings)
};

// The shape of one training batch, for FLOP counts.
struct BatchShape {
  int64_t rows = 0;        // sentences
  int64_t src_len = 0;     // padded source length, EOS included
  int64_t tgt_len = 0;     // padded target length
  int64_t src_tokens = 0;  // non-pad source tokens
  int64_t tgt_tokens = 0;  // non-pad target tokens (the output projection runs on these only)
};

// A model key (without "model.") and what is wrong with its value given the others.
struct ModelKeyProblem {
  std::string key;
  std::string message;
};

// The decoder's cross-attention as search can record it: `layers` layers of `heads` heads each;
// no layers for a model without attention.
struct AttentionLayout {
  int64_t layers = 0;
  int64_t heads = 0;
};

using ArchBuilder =
    std::function<std::shared_ptr<EncoderDecoder>(const ModelConfig&, const VocabSizes&)>;

struct ArchSpec {
  // Its own model keys (torch_free/archs/arch_options.h declares them); registering publishes them
  // to the configuration schema.
  std::vector<ArchOptionSpec> options;
  // Empty for an architecture registered for its keys only (register_builtin_archs()).
  ArchBuilder build;
  // Checks that need several model keys at once; empty when the config is buildable.
  std::function<std::vector<ModelKeyProblem>(const ModelConfig&)> check;
  // The model size d of the inverse-square-root schedule's d^-0.5.
  std::function<int64_t(const ModelConfig&)> model_dim;
  // Forward FLOPs (multiply-adds x 2) of one batch, counted analytically.
  std::function<double(const ModelConfig&, int64_t tgt_vocab, const BatchShape&)> forward_flops;
  std::function<AttentionLayout(const ModelConfig&)> cross_attention;
};

// Keys are model keys without the "model." prefix; values are YAML text.
using PresetValues = std::vector<std::pair<std::string, std::string>>;

// Both throw std::logic_error for a name registered twice or a missing base.
void register_arch(const std::string& name, ArchSpec spec);
void register_preset(const std::string& name, const std::string& base, PresetValues values);

// Gives an architecture registered without a builder its builder; std::logic_error for an
// unregistered one or one that has a builder.
void set_arch_builder(const std::string& arch, ArchBuilder build);

// Registers nmtzoo's architectures and presets; safe to call more than once. Called by the apps
// (and the tests' main), never by library code. Defined in nmtzoo_models (it needs LibTorch).
void register_builtin_models();
// Their keys, checks and presets without the builders, in the torch-free nmtzoo_common: enough
// to read, check and write configs (nmtzoo-plan); register_builtin_models() does this too.
void register_builtin_archs();

std::vector<std::string> registered_models();  // architectures and presets, sorted
// The architecture a name resolves to through its preset chain. Throws std::invalid_argument
// for an unknown name, suggesting the closest registered one and listing all.
std::string resolve_arch(const std::string& name);
const ArchSpec& arch_spec(const std::string& name);  // through resolve_arch
// Most specific first: the name, its base, ..., the architecture.
std::vector<std::string> preset_chain(const std::string& name);
// The preset's own values (empty for an architecture).
const PresetValues& preset_values(const std::string& name);

// config.arch's own keys and their values (the default where unset), in declaration order.
PresetValues arch_option_values(const ModelConfig& config);

// Builds the architecture of config.arch (presets applied beforehand). In nmtzoo_models;
// std::logic_error for an architecture without a builder.
std::shared_ptr<EncoderDecoder> build_model(const ModelConfig& config, const VocabSizes& vocab);

// Training FLOPs of one batch: forward and a backward of twice the forward.
double training_flops(const ModelConfig& config, int64_t tgt_vocab, const BatchShape& shape);

}  // namespace nmtzoo
