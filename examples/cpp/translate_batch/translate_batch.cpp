// SPDX-License-Identifier: MIT
// Translates a batch of sentences with a trained checkpoint, through an installed nmtzoo
// (docs/package.md): a Translator loads the checkpoint once, the decoding options are the
// checkpoint's own with --beam on top (checked by the config schema, as nmtzoo-translate's are),
// and each translation is then scored by teacher forcing.
//
//   translate_batch CHECKPOINT [--beam N] [--threads N] < sentences
//
// Prints one translation a line on stdout, what nmtzoo-translate -c CHECKPOINT --beam N prints;
// on stderr, each translation's log-probability and where the SentencePiece shim was loaded from.
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "libtorch/runtime/runtime.h"
#include "libtorch/search/translator.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace {

int usage() {
  std::cerr << "usage: translate_batch CHECKPOINT [--beam N] [--threads N] < sentences\n";
  return 2;
}

int translate(const std::string& checkpoint, const std::vector<nmtzoo::KeyValue>& overrides,
              int64_t threads) {
  // The architectures a checkpoint may name must be registered before it is loaded.
  nmtzoo::register_builtin_models();
  nmtzoo::configure_threads(threads);
  nmtzoo::Translator translator(std::vector<std::string>{checkpoint});
  const nmtzoo::SearchOptions options = translator.search_options(overrides);

  std::vector<std::string> sources;
  for (std::string line; std::getline(std::cin, line);) sources.push_back(line);
  const std::vector<nmtzoo::Translation> translations =
      translator.translate_batch(sources, options);

  std::vector<std::string> outputs;
  for (const nmtzoo::Translation& translation : translations) {
    outputs.push_back(translation.texts.empty() ? "" : translation.texts.front());
    std::cout << outputs.back() << "\n";
  }
  const std::vector<nmtzoo::ScoredPair> scores = translator.score_batch(sources, outputs, options);
  for (size_t i = 0; i < scores.size(); ++i) {
    std::cerr << "line " << i + 1 << ": log p = " << scores[i].log_prob << " over "
              << scores[i].tokens.size() << " tokens\n";
  }
  std::cerr << "translated " << sources.size() << " sentences with "
            << translator.config().model.arch << " (beam " << options.beam << ", " << threads
            << " thread(s))\n"
            << "SentencePiece shim: " << nmtzoo::sentencepiece_shim_path() << "\n";
  return std::cout.flush() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) return usage();
  std::vector<nmtzoo::KeyValue> overrides;
  int64_t threads = 1;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--beam") {
      overrides.push_back({"decoding.beam", argv[i + 1], "--beam"});
    } else if (flag == "--threads") {
      threads = std::stoll(argv[i + 1]);
    } else {
      return usage();
    }
  }
  try {
    return translate(argv[1], overrides, threads);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
