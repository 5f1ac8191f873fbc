// SPDX-License-Identifier: MIT
// The flags that load a Translator, the same in nmtzoo-translate and nmtzoo-serve: repeated
// checkpoints make one ensemble, with its weights and combination.
#pragma once

#include <c10/core/Device.h>
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "libtorch/search/translator.h"

namespace nmtzoo {

struct TranslatorFlags {
  std::vector<std::string> checkpoints;
  std::vector<double> weights;
  std::string ensemble_mode = "prob";

  TranslatorOptions options(const c10::Device& device) const {
    return TranslatorOptions().device(device).weights(weights).ensemble_mode(
        ensemble_mode == "logprob" ? EnsembleMode::kLogProb : EnsembleMode::kProb);
  }
};

// -c/--checkpoint, --weights and --ensemble-mode; returns -c, which a caller may make required.
inline CLI::Option* add_translator_flags(CLI::App& app, TranslatorFlags& flags) {
  CLI::Option* checkpoint =
      app.add_option("-c,--checkpoint", flags.checkpoints,
                     "checkpoint (.pt) written by nmtzoo-train; repeat for an "
                     "ensemble of any architectures sharing the vocabularies");
  app.add_option("--weights", flags.weights,
                 "ensemble: one positive weight per checkpoint, e.g. 0.5,0.3,0.2 (default: equal)")
      ->delimiter(',');
  app.add_option("--ensemble-mode", flags.ensemble_mode,
                 "prob: log of the weighted mean of probabilities (fairseq); logprob: weighted sum "
                 "of log-probabilities (Marian)")
      ->check(CLI::IsMember({"prob", "logprob"}))
      ->capture_default_str();
  return checkpoint;
}

}  // namespace nmtzoo
