// SPDX-License-Identifier: MIT
// The built-in architectures' builders, and the model builder every program calls.
#include <c10/util/Exception.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "libtorch/models/rnn_seq2seq.h"
#include "libtorch/models/transformer.h"
#include "torch_free/archs/archs.h"

namespace nmtzoo {

void register_builtin_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_builtin_archs();
    set_arch_builder("transformer", [](const ModelConfig& c, const VocabSizes& vocab) {
      return std::shared_ptr<EncoderDecoder>(
          Transformer(transformer_module_options(c, vocab)).ptr());
    });
    set_arch_builder("rnn", [](const ModelConfig& c, const VocabSizes& vocab) {
      return std::shared_ptr<EncoderDecoder>(RnnSeq2Seq(rnn_module_options(c, vocab)).ptr());
    });
  });
}

std::shared_ptr<EncoderDecoder> build_model(const ModelConfig& config, const VocabSizes& vocab) {
  const ArchSpec& spec = arch_spec(config.arch);
  if (!spec.build) {
    throw std::logic_error("model architecture '" + resolve_arch(config.arch) +
                           "' has no builder in this program: register_builtin_archs() registers "
                           "keys only; call register_builtin_models()");
  }
  auto out_of_memory = [&] {
    using std::to_string;
    std::string sizes;
    for (const auto& [key, value] : arch_option_values(config))
      sizes += "model." + key + " " + value + ", ";
    return std::runtime_error("model " + config.arch + " does not fit in memory: " + sizes +
                              "model.encoder_layers " + to_string(config.encoder_layers) +
                              ", model.decoder_layers " + to_string(config.decoder_layers) +
                              ", vocabularies " + to_string(vocab.src) + " and " +
                              to_string(vocab.tgt));
  };
  try {
    return spec.build(config, vocab);
  } catch (const std::bad_alloc&) {
    throw out_of_memory();
  } catch (const c10::Error& e) {
    // LibTorch reports a failed allocation as an enforce failure in its allocator.
    if (std::string(e.what()).find("alloc") != std::string::npos) throw out_of_memory();
    throw;
  }
}

}  // namespace nmtzoo
