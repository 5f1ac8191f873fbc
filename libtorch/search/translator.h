// SPDX-License-Identifier: MIT
// The library's way to translate (CTranslate2's Translator): load one checkpoint, or an ensemble
// of checkpoints sharing their vocabularies, once; then translate or score batches with decoding
// options given per call. nmtzoo-translate, nmtzoo-serve, nmtzoo-bench and the bindings are thin
// callers of it.
#pragma once

#include <c10/core/Device.h>
#include <torch/arg.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "libtorch/runtime/trained_model.h"
#include "libtorch/search/ensemble.h"
#include "libtorch/search/translation_pipeline.h"
#include "torch_free/config/config.h"
#include "torch_free/config/loader.h"

namespace nmtzoo {

struct TranslatorOptions {
  TORCH_ARG(c10::Device, device) = c10::Device(c10::kCPU);
  // Ensemble weights, one positive value per checkpoint; empty = equal.
  TORCH_ARG(std::vector<double>, weights) = {};
  TORCH_ARG(EnsembleMode, ensemble_mode) = EnsembleMode::kProb;
  // Rerun the whole prefix every step instead of using the cache (benchmarks only).
  TORCH_ARG(bool, recompute_prefix) = false;
};

// Teacher-forced scores of one target given its source.
struct ScoredPair {
  double log_prob = 0;                  // sum over the target tokens and EOS
  std::vector<double> token_log_probs;  // one per target token, then EOS
  std::vector<std::string> tokens;      // the target pieces, then "</s>"
  bool truncated = false;               // source or target cut to the model's length limit
};

class Translator {
 public:
  // Loads every checkpoint on options.device and checks that they share their vocabularies and
  // that the weights fit them. Throws std::invalid_argument naming the files otherwise.
  explicit Translator(const std::vector<std::string>& checkpoints, TranslatorOptions options = {});
  // Models already loaded (e.g. by another Translator: they are shared, not copied).
  Translator(std::vector<TrainedModel> members, std::vector<std::string> paths,
             TranslatorOptions options);
  ~Translator();

  // The first checkpoint's config: its decoding section holds the default options.
  const RunConfig& config() const { return members_.front().config; }
  // config().decoding with `overrides` (command-line or request values of decoding.* keys)
  // applied and checked by the schema; throws ConfigError naming each bad key.
  SearchOptions search_options(const std::vector<KeyValue>& overrides = {}) const;

  // Everything a call with `options` needs that can fail before any input is read: the attention
  // choice against each model, int8 support on this device, the shortlist file (loaded here).
  // translate_batch does it too; callers that read input first call it early.
  void prepare(const SearchOptions& options);

  // One Translation per request, in order (TranslationPipeline::translate). `first_line` numbers
  // the first request for messages and sampling seeds; `progress` gets the count done after each
  // batch; `between_steps` is called on this thread before each decoding step and may throw to
  // stop the call (the Python module's Ctrl-C, translator_bindings.cpp). Safe to call from several
  // threads, and calls run at once: a call keeps its state (its decoder states, the ensemble's
  // attention choice) to itself and changes no module, as CTranslate2's translators on one set of
  // weights.
  std::vector<Translation> translate_batch(const std::vector<TranslationRequest>& requests,
                                           const SearchOptions& options, int64_t first_line = 1,
                                           const std::function<void(int64_t)>& progress = {},
                                           const std::function<void()>& between_steps = {});
  std::vector<Translation> translate_batch(const std::vector<std::string>& sources,
                                           const SearchOptions& options, int64_t first_line = 1);
  // Teacher-forced log-probabilities of each target given its source (the ensemble's combined
  // distribution for several models), batched by options.batch_tokens; in bf16 autocast when
  // options.dtype is bf16, else with the float32 weights (int8 weights are not used to score).
  // `between_batches`, called before each batch, may throw to stop the call.
  std::vector<ScoredPair> score_batch(const std::vector<std::string>& sources,
                                      const std::vector<std::string>& targets,
                                      const SearchOptions& options,
                                      const std::function<void()>& between_batches = {});

  const std::vector<TrainedModel>& members() const { return members_; }
  const std::vector<std::string>& paths() const { return paths_; }
  const Tokenizers& tokenizers() const { return members_.front().tokenizers; }
  const TranslatorOptions& options() const { return options_; }
  int64_t max_source_tokens() const;
  // Target tokens a shortlisted batch was decoded over, on average over every call so far.
  double mean_shortlist_size() const;
  // The int8 weights packed so far (by calls with dtype int8).
  const Int8Linears& int8() const { return *int8_; }
  // Which attention the translations record: "the models' mean" for an ensemble, else the
  // resolved choice of `options` (e.g. "layer 2, mean of heads").
  std::string describe_attention(const SearchOptions& options) const;

 private:
  void check_members() const;
  // Each member's attention choice for `options` (attention_choice); throws when alignments or
  // the coverage penalty need attention that no member has.
  std::vector<std::optional<AttentionChoice>> attention_choices(const SearchOptions& options) const;
  // The choice of `asked` for member `i`, resolved (the penultimate layer) and checked against
  // its architecture; none when the model has no cross-attention.
  std::optional<AttentionChoice> attention_choice(size_t i, const AttentionChoice& asked) const;
  // The model to search with `options`, with the attention it records chosen; `options.attention`
  // becomes the single model's resolved choice.
  std::shared_ptr<EncoderDecoder> search_model(SearchOptions& options) const;
  std::shared_ptr<const Shortlist> shortlist(const std::string& path);

  std::vector<TrainedModel> members_;
  std::vector<std::string> paths_;
  TranslatorOptions options_;
  std::shared_ptr<EncoderDecoder> model_;  // the single model, possibly prefix-recomputing
  std::shared_ptr<EnsembleModel> ensemble_;
  std::unique_ptr<Int8Linears> int8_;
  std::string shortlist_path_;
  std::shared_ptr<const Shortlist> shortlist_;
  int64_t shortlisted_batches_ = 0;
  int64_t shortlisted_tokens_ = 0;
  mutable std::mutex mutex_;  // the shortlist and the counters (a call's decoding holds no lock)
};

}  // namespace nmtzoo
