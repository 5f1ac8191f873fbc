// SPDX-License-Identifier: MIT
// A new architecture defined outside nmtzoo, through an installed nmtzoo (docs/package.md):
// declared, registered with a model key of its own and a preset, trained for a few updates by
// nmtzoo's own training loop (nmtzoo::Trainer, what nmtzoo-train runs), and translating with the
// checkpoint that training wrote.
//
// compact_transformer is a Transformer sized by three keys of its own: model.width (the model
// size), model.ffn_multiple (the feed-forward size, as a multiple of the width) and
// model.head_dim (the size of one attention head: heads = width / head_dim). They are declared
// once, on the architecture's options struct (torch_free/archs/arch_options.h); registering
// publishes them to the config schema, so the YAML, --set, presets, checkpoints and error messages
// treat them as any other key. The keys every encoder-decoder has (layers, dropout, max_positions)
// are read as the built-in architectures read them (torch_free/archs/archs.h).
//
//   custom_architecture WORK_DIR [--steps N] [--set KEY=VALUE ...]
//
// WORK_DIR (created; it must not hold a run yet) gets a synthetic corpus (the target reverses the
// source's words), run.yaml and the run folder run/.
#include <torch/arg.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/models/transformer.h"
#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/translator.h"
#include "libtorch/train/trainer.h"
#include "torch_free/archs/arch_options.h"
#include "torch_free/archs/archs.h"
#include "torch_free/archs/registry.h"
#include "torch_free/config/loader.h"

namespace {

namespace fs = std::filesystem;
using namespace nmtzoo;

// The architecture's own model keys and their defaults, as a module options struct.
struct CompactTransformerOptions {
  TORCH_ARG(int64_t, width) = 64;        // model size E
  TORCH_ARG(int64_t, ffn_multiple) = 4;  // feed-forward inner size = ffn_multiple * width
  TORCH_ARG(int64_t, head_dim) = 16;     // size of one attention head; heads = width / head_dim
};

const ArchOptions<CompactTransformerOptions>& keys() {
  static const ArchOptions<CompactTransformerOptions> declared = [] {
    ArchOptions<CompactTransformerOptions> keys{CompactTransformerOptions{}};
    keys.integer("width", NMTZOO_FIELD(width), kModelSize, "compact_transformer: model size");
    keys.integer("ffn_multiple", NMTZOO_FIELD(ffn_multiple), Range{1, 16},
                 "compact_transformer: feed-forward size as a multiple of model.width");
    keys.integer(
        "head_dim", NMTZOO_FIELD(head_dim), kModelSize,
        "compact_transformer: size of one attention head (heads = model.width / head_dim)");
    return keys;
  }();
  return declared;
}

// The Transformer the architecture builds for `config` (and vocabularies `vocab`).
TransformerOptions transformer_options(const ModelConfig& config, const VocabSizes& vocab = {}) {
  const CompactTransformerOptions own = keys().read(config);
  TransformerOptions options = with_shared_keys(TransformerOptions(vocab.src, vocab.tgt), config);
  options.d_model(own.width())
      .ffn_dim(own.ffn_multiple() * own.width())
      .heads(std::max<int64_t>(1, own.width() / own.head_dim()))
      .sharing(resolve_sharing(config.share_embeddings, vocab, true));
  return options;
}

// `config` as the built-in transformer architecture reads it, to count FLOPs as it does.
ModelConfig as_builtin_transformer(const ModelConfig& config) {
  const TransformerOptions options = transformer_options(config);
  ModelConfig transformer = config;
  transformer.arch = "transformer";
  transformer.arch_options = {{"d_model", std::to_string(options.d_model())},
                              {"ffn_dim", std::to_string(options.ffn_dim())},
                              {"heads", std::to_string(options.heads())}};
  return transformer;
}

ArchSpec compact_transformer_arch() {
  ArchSpec spec;
  spec.options = keys().specs();
  spec.build = [](const ModelConfig& config,
                  const VocabSizes& vocab) -> std::shared_ptr<EncoderDecoder> {
    return Transformer(transformer_options(config, vocab)).ptr();
  };
  // Checks of several keys at once, reported as config errors naming the key.
  spec.check = [](const ModelConfig& config) -> std::vector<ModelKeyProblem> {
    const CompactTransformerOptions own = keys().read(config);
    if (own.width() % own.head_dim() == 0) return {};
    return {{"head_dim", "(" + std::to_string(own.head_dim()) + ") must divide model.width (" +
                             std::to_string(own.width()) + ")"}};
  };
  spec.model_dim = [](const ModelConfig& config) { return transformer_options(config).d_model(); };
  spec.forward_flops = [](const ModelConfig& config, int64_t tgt_vocab, const BatchShape& shape) {
    return arch_spec("transformer").forward_flops(as_builtin_transformer(config), tgt_vocab, shape);
  };
  spec.cross_attention = [](const ModelConfig& config) {
    const TransformerOptions options = transformer_options(config);
    return AttentionLayout{options.decoder_layers(), options.heads()};
  };
  return spec;
}

void register_compact_transformer() {
  register_arch("compact_transformer", compact_transformer_arch());
  // A named size: fills only the keys the YAML and --set leave unset.
  register_preset("compact_transformer_tiny", "compact_transformer",
                  {{"width", "32"},
                   {"ffn_multiple", "2"},
                   {"head_dim", "16"},
                   {"encoder_layers", "1"},
                   {"decoder_layers", "1"}});
}

// <dir>/<split>.src and .tgt: `pairs` sentences of 2 to 6 words, the target in reverse order.
void write_reversal_split(const fs::path& dir, const std::string& split, size_t pairs,
                          uint64_t seed) {
  static const std::vector<std::string> words{"alpha",   "bravo", "charlie", "delta", "echo",
                                              "foxtrot", "golf",  "hotel",   "india", "juliet"};
  std::mt19937_64 rng(seed);
  std::ofstream src(dir / (split + ".src"));
  std::ofstream tgt(dir / (split + ".tgt"));
  for (size_t i = 0; i < pairs; ++i) {
    std::vector<std::string> sentence(2 + rng() % 5);
    for (auto& word : sentence) word = words[rng() % words.size()];
    for (size_t w = 0; w < sentence.size(); ++w) {
      src << (w ? " " : "") << sentence[w];
      tgt << (w ? " " : "") << sentence[sentence.size() - 1 - w];
    }
    src << "\n";
    tgt << "\n";
  }
  src.close();
  tgt.close();
  if (!src || !tgt)
    throw std::runtime_error("cannot write the " + split + " split in " + dir.string());
}

std::string write_run(const fs::path& work) {
  fs::create_directories(work / "data");
  write_reversal_split(work / "data", "train", 400, 1);
  write_reversal_split(work / "data", "valid", 40, 2);
  write_reversal_split(work / "data", "test", 20, 3);
  const fs::path path = work / "run.yaml";
  std::ofstream yaml(path);
  yaml << "data:\n  dir: " << (work / "data").string()
       << "\n  src_lang: src\n  tgt_lang: tgt\n  train: train\n  valid: valid\n  test: [test]\n"
       << "  max_len: 40\n"
       << "tokenizer:\n  vocab_size: 40\n"
       << "model:\n  arch: compact_transformer_tiny\n  dropout: 0.0\n  max_positions: 64\n"
       << "training:\n  output_dir: " << (work / "run").string()
       << "\n  device: cpu\n  threads: 1\n"
       << "  max_tokens: 400\n  lr: 0.003\n  warmup_steps: 10\n  valid_every: 0\n  log_every: 5\n"
       << "decoding:\n  beam: 3\n  max_len_a: 1.2\n  max_len_b: 5\n";
  yaml.close();
  if (!yaml) throw std::runtime_error("cannot write " + path.string());
  return path.string();
}

int run(const fs::path& work_dir, const std::vector<std::string>& overrides) {
  register_builtin_models();
  register_compact_transformer();  // before any config naming it is read
  const std::string config_path = write_run(fs::absolute(work_dir));
  RunConfig config = load_config(config_path, overrides);
  check_run_config(config);  // applies the preset, runs the architecture's checks
  std::cout << "model " << config.model.arch << ", architecture " << resolve_arch(config.model.arch)
            << ":";
  for (const auto& [key, value] : arch_option_values(config.model)) {
    std::cout << " model." << key << " " << value << " (" << config.where("model." + key) << ")";
  }
  std::cout << "\n";

  std::string checkpoint;
  {
    Trainer trainer(config, /*resume=*/false, std::cerr);
    const TrainResult result = trainer.train();
    std::cout << "trained " << count_parameters(trainer.model()) << " parameters for "
              << result.progress.step << " updates (" << result.stop_reason << "); validation loss "
              << result.last_validation.loss << ", BLEU " << result.last_validation.bleu << "\n";
    checkpoint = trainer.checkpoint_dir() + "/checkpoint_last.pt";
  }

  // The checkpoint names the architecture and its keys: loading it builds the same model.
  Translator translator(std::vector<std::string>{checkpoint});
  const std::vector<std::string> sources{"alpha bravo charlie", "delta echo",
                                         "golf hotel india juliet"};
  const auto translations = translator.translate_batch(sources, translator.search_options());
  for (size_t i = 0; i < sources.size(); ++i) {
    std::cout << sources[i] << " -> "
              << (translations[i].texts.empty() ? "" : translations[i].texts.front()) << "\n";
  }
  std::cout << "checkpoint " << checkpoint << " (" << translator.config().model.arch << ")\n";
  return std::cout.flush() ? 0 : 1;
}

int usage() {
  std::cerr << "usage: custom_architecture WORK_DIR [--steps N] [--set KEY=VALUE ...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread starts: SIGINT and SIGTERM then stop training after the current update.
  install_stop_signal_handlers();
  if (argc < 2 || argc % 2 != 0) return usage();
  std::string steps = "20";
  std::vector<std::string> overrides;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--steps") {
      steps = argv[i + 1];
    } else if (flag == "--set") {
      overrides.push_back(argv[i + 1]);
    } else {
      return usage();
    }
  }
  overrides.insert(overrides.begin(), "training.max_steps=" + steps);  // --set may override it
  try {
    return run(argv[1], overrides);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
