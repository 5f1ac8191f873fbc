// SPDX-License-Identifier: MIT
// Model weights as a file Python reads with torch.load: a dict of parameter name -> tensor
// (names as in named_parameters(), e.g. "encoder.layers.0.self_attn.in_proj_weight").
#pragma once

#include <cstdint>
#include <string>

namespace torch::nn {
class Module;
}

namespace nmtzoo {

struct RunConfig;

// Writes every parameter and buffer, atomically.
void export_weights(const torch::nn::Module& model, const std::string& path);

// Loads weights written by export_weights (or Python's torch.save of such a dict). Every name
// must be present with the model's shape; extra or missing names and shape mismatches are listed
// in one std::runtime_error naming the file. The model is unchanged when anything is wrong.
void import_weights(torch::nn::Module& model, const std::string& path);

// The model experiments/measure/python_peer.py rebuilds, as a JSON file at `path` (atomically):
// the architecture (its preset applied), its layers and own options, the target vocabulary, the
// length limits and the batch size in tokens.
void export_model_spec(const RunConfig& config, int64_t target_vocab, const std::string& path);

}  // namespace nmtzoo
