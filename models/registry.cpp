#include "models/registry.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/config/loader.h"
#include "models/rnn_seq2seq.h"
#include "models/transformer.h"

namespace nmtzoo {
namespace {

struct Preset {
  std::string base;
  PresetValues values;
};

struct Registry {
  std::map<std::string, ModelFactory> archs;
  std::map<std::string, Preset> presets;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

bool is_registered(const std::string& name) {
  return registry().archs.count(name) != 0 || registry().presets.count(name) != 0;
}

// Most specific first: name, its base, ..., the architecture.
std::vector<std::string> preset_chain(const std::string& name) {
  std::vector<std::string> chain{name};
  while (registry().presets.count(chain.back()) != 0) {
    chain.push_back(registry().presets.at(chain.back()).base);
  }
  return chain;
}

EmbeddingSharing resolve_sharing(SharingChoice choice, const VocabSizes& vocab, bool can_tie) {
  switch (choice) {
    case SharingChoice::kNone: return EmbeddingSharing::kNone;
    case SharingChoice::kDecoder: return EmbeddingSharing::kDecoder;
    case SharingChoice::kAll: return EmbeddingSharing::kAll;
    case SharingChoice::kAuto:
      if (!can_tie) return EmbeddingSharing::kNone;
      return vocab.joint ? EmbeddingSharing::kAll : EmbeddingSharing::kDecoder;
  }
  return EmbeddingSharing::kNone;
}

std::shared_ptr<EncoderDecoder> make_transformer(const ModelConfig& c, const VocabSizes& vocab) {
  auto options = TransformerOptions(vocab.src, vocab.tgt)
                     .d_model(c.d_model)
                     .heads(c.heads)
                     .ffn_dim(c.ffn_dim)
                     .encoder_layers(c.encoder_layers)
                     .decoder_layers(c.decoder_layers)
                     .dropout(c.dropout)
                     .attention_dropout(c.attention_dropout)
                     .activation_dropout(c.activation_dropout)
                     .activation(c.activation)
                     .norm(c.norm)
                     .positions(c.positions)
                     .max_positions(c.max_positions)
                     .sharing(resolve_sharing(c.share_embeddings, vocab, true));
  return Transformer(options).ptr();
}

std::shared_ptr<EncoderDecoder> make_rnn(const ModelConfig& c, const VocabSizes& vocab) {
  auto options = RnnSeq2SeqOptions(vocab.src, vocab.tgt)
                     .emb_dim(c.emb_dim)
                     .hidden_dim(c.hidden_dim)
                     .cell(c.cell)
                     .encoder_layers(c.encoder_layers)
                     .decoder_layers(c.decoder_layers)
                     .dropout(c.dropout)
                     .attention(c.attention)
                     .attention_dim(c.attention_dim)
                     .attention_query(c.attention_query)
                     .readout(c.readout)
                     .readout_dim(c.readout_dim)
                     .max_positions(c.max_positions)
                     .sharing(resolve_sharing(c.share_embeddings, vocab, c.readout_dim == c.emb_dim));
  return RnnSeq2Seq(options).ptr();
}

// Checks that need several model keys at once, before any work starts.
void check_model(const RunConfig& config, const std::string& arch, std::vector<std::string>& problems) {
  const ModelConfig& m = config.model;
  auto problem = [&](const std::string& key, const std::string& message) {
    problems.push_back(config.where("model." + key) + ": model." + key + " " + message);
  };
  if (arch == "transformer" && m.d_model % m.heads != 0) {
    problem("heads", "(" + std::to_string(m.heads) + ") must divide model.d_model (" +
                         std::to_string(m.d_model) + ")");
  }
  if (arch == "rnn") {
    if (m.attention == AttentionScore::kDot || m.attention == AttentionScore::kScaledDot) {
      problem("attention", "dot scoring compares the decoder state (hidden_dim) with annotations "
                           "(2 x hidden_dim); use general or additive");
    }
    if (!m.attention && m.attention_query == AttentionQuery::kCurrent) {
      problem("attention_query", "'current' needs attention (model.attention is none)");
    }
    bool ties = m.share_embeddings == SharingChoice::kDecoder || m.share_embeddings == SharingChoice::kAll;
    if (ties && m.readout_dim != m.emb_dim) {
      problem("share_embeddings", "ties the output projection to the target embedding, which needs "
                                  "model.readout_dim == model.emb_dim (" +
                                      std::to_string(m.readout_dim) + " vs " +
                                      std::to_string(m.emb_dim) + ")");
    }
  }
}

}  // namespace

void register_arch(const std::string& name, ModelFactory factory) {
  if (is_registered(name)) throw std::logic_error("model '" + name + "' is registered twice");
  registry().archs.emplace(name, std::move(factory));
}

void register_preset(const std::string& name, const std::string& base, PresetValues values) {
  if (is_registered(name)) throw std::logic_error("model '" + name + "' is registered twice");
  if (!is_registered(base)) {
    throw std::logic_error("preset '" + name + "' builds on unregistered '" + base + "'");
  }
  for (const auto& [key, value] : values) {
    if (find_option("model." + key) == nullptr) {
      throw std::logic_error("preset '" + name + "' sets unknown key model." + key);
    }
  }
  registry().presets.emplace(name, Preset{base, std::move(values)});
}

void register_builtin_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_arch("transformer", make_transformer);
    register_arch("rnn", make_rnn);
    // Vaswani et al. (2017), Table 3.
    register_preset("transformer_base", "transformer",
                    {{"d_model", "512"}, {"ffn_dim", "2048"}, {"heads", "8"},
                     {"encoder_layers", "6"}, {"decoder_layers", "6"}, {"dropout", "0.1"}});
    register_preset("transformer_big", "transformer_base",
                    {{"d_model", "1024"}, {"ffn_dim", "4096"}, {"heads", "16"}, {"dropout", "0.3"}});
    // Sized for Multi30k (29k pairs) on a small CPU.
    register_preset("transformer_small", "transformer_base",
                    {{"d_model", "256"}, {"ffn_dim", "1024"}, {"heads", "4"},
                     {"encoder_layers", "3"}, {"decoder_layers", "3"}, {"dropout", "0.1"}});
    // Bahdanau et al. (2015), RNNsearch: m = 620, n = 1000, n' = 1000, l = 500.
    register_preset("rnn_bahdanau", "rnn",
                    {{"emb_dim", "620"}, {"hidden_dim", "1000"}, {"attention", "additive"},
                     {"attention_dim", "1000"}, {"attention_query", "previous"},
                     {"readout", "maxout"}, {"readout_dim", "500"}, {"cell", "gru"},
                     {"encoder_layers", "1"}, {"decoder_layers", "1"}, {"dropout", "0.0"}});
    register_preset("rnn_bahdanau_small", "rnn_bahdanau",
                    {{"emb_dim", "256"}, {"hidden_dim", "512"}, {"attention_dim", "512"},
                     {"readout_dim", "256"}, {"dropout", "0.3"}});
    // Cho et al. (2014): no attention, the encoder summary is the context at every step.
    register_preset("rnn_encdec", "rnn_bahdanau_small", {{"attention", "none"}});
    // Luong et al. (2015): general scoring on the current state, attentional tanh layer.
    register_preset("rnn_luong", "rnn_bahdanau_small",
                    {{"attention", "general"}, {"attention_query", "current"}, {"readout", "tanh"}});
  });
}

std::vector<std::string> registered_models() {
  std::vector<std::string> names;
  for (const auto& [name, unused] : registry().archs) names.push_back(name);
  for (const auto& [name, unused] : registry().presets) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const PresetValues& preset_values(const std::string& name) {
  static const PresetValues none;
  auto it = registry().presets.find(name);
  return it == registry().presets.end() ? none : it->second.values;
}

std::string resolve_arch(const std::string& name) {
  if (!is_registered(name)) {
    std::string names;
    std::string closest;
    size_t best = 4;
    for (const auto& candidate : registered_models()) {
      names += (names.empty() ? "" : ", ") + candidate;
      size_t cost = edit_distance(name, candidate);
      if (cost < best) best = cost, closest = candidate;
    }
    std::string message = "unknown model '" + name + "'";
    if (!closest.empty()) message += "; did you mean '" + closest + "'?";
    throw ConfigError({message + " (registered: " + names + ")"});
  }
  return preset_chain(name).back();
}

void apply_model_preset(RunConfig& config) {
  const std::string& name = config.model.arch;
  std::string arch;
  try {
    arch = resolve_arch(name);
  } catch (const ConfigError& e) {
    throw ConfigError({config.where("model.arch") + ": model.arch " + e.problems.front()});
  }
  auto chain = preset_chain(name);
  std::vector<std::string> problems;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (const auto& [key, value] : preset_values(*it)) {
      std::string error = set_default_option(config, "model." + key, value, "preset " + *it);
      if (!error.empty()) problems.push_back("preset " + *it + ": " + error);
    }
  }
  check_model(config, arch, problems);
  if (!problems.empty()) throw ConfigError(problems);
}

std::shared_ptr<EncoderDecoder> build_model(const ModelConfig& config, const VocabSizes& vocab) {
  return registry().archs.at(resolve_arch(config.arch))(config, vocab);
}

}  // namespace nmtzoo
