// SPDX-License-Identifier: MIT
// A trained model ready for inference, and the model half of a config: presets applied, the
// architecture's checks run, the model built for a tokenizer's vocabularies.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <string>

#include "torch_free/archs/registry.h"
#include "torch_free/config/config.h"
#include "torch_free/data/tokenizers.h"

namespace nmtzoo {

class EncoderDecoder;

// Fills model keys left unset from model.arch's presets (most specific first), then runs the
// architecture's checks of several keys at once. Throws ConfigError naming each key's file and
// line; an unknown model.arch suggests the closest registered name. The architectures must be
// registered (register_builtin_models(), which apps call).
void apply_model_preset(RunConfig& config);

// Every check of a run config, the same in every app and before any work: apply_model_preset,
// then check_config's rules across keys. Throws ConfigError listing every problem.
void check_run_config(RunConfig& config);

VocabSizes vocab_sizes(const Tokenizers& tokenizers);

// Where the tokenizer prefix of a checkpoint of format version 1, which names its tokenizer
// models by a path relative to the folder training ran in, points from the current directory:
// unchanged when it resolves already, else relative to that folder, found by taking
// training.output_dir off the checkpoint's run folder.
std::string resolve_tokenizer_prefix(const RunConfig& config, const std::string& checkpoint_path);

struct TrainedModel {
  RunConfig config;
  Tokenizers tokenizers;
  std::shared_ptr<EncoderDecoder> model;  // in eval mode, on the requested device
};

// Builds the model a checkpoint describes and loads its weights. The tokenizer files named in the
// stored config must exist and be the ones the model was trained with (fingerprint check).
TrainedModel load_trained_model(const std::string& checkpoint_path, const c10::Device& device);

// "" or what makes `b` unrelated to `a`, whose weights an average would mix although they mean
// different things: other languages, another architecture or other model keys, other source or
// target vocabularies (what nmtzoo-translate refuses in an ensemble, and more).
std::string unrelated_models_problem(const TrainedModel& a, const TrainedModel& b);

}  // namespace nmtzoo
