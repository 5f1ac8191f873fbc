// SPDX-License-Identifier: MIT
#include "libtorch/search/translator.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "libtorch/kernels/int8_linear.h"
#include "libtorch/models/encoder_decoder.h"
#include "libtorch/runtime/batch.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/prefix_recomputing_model.h"
#include "libtorch/search/shortlist.h"
#include "torch_free/data/batching.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

std::vector<TrainedModel> load_members(const std::vector<std::string>& checkpoints,
                                       const c10::Device& device) {
  if (checkpoints.empty())
    throw std::invalid_argument("a Translator needs at least one checkpoint");
  std::vector<TrainedModel> members;
  for (const auto& path : checkpoints) members.push_back(load_trained_model(path, device));
  return members;
}

// A --*-layer or --*-head(s) value outside the model's attention layout.
// `has` is what the model has: "3 decoder attention layer(s)", or per layer "4 head(s)".
[[noreturn]] void bad_attention_flag(const std::string& flag, int64_t value, bool per_layer,
                                     const std::string& has, const std::string& give,
                                     const ModelConfig& model, const std::string& path) {
  throw std::invalid_argument(fmt::format("{} {}: {}model {} has {}; give {} ({})", flag, value,
                                          per_layer ? "each layer of " : "", model.arch, has, give,
                                          path));
}

}  // namespace

Translator::Translator(const std::vector<std::string>& checkpoints, TranslatorOptions options)
    : Translator(load_members(checkpoints, options.device()), checkpoints, std::move(options)) {}

Translator::Translator(std::vector<TrainedModel> members, std::vector<std::string> paths,
                       TranslatorOptions options)
    : members_(std::move(members)),
      paths_(std::move(paths)),
      options_(std::move(options)),
      int8_(std::make_unique<Int8Linears>()) {
  if (members_.empty() || members_.size() != paths_.size()) {
    throw std::invalid_argument("a Translator needs one path per loaded model, and at least one");
  }
  check_members();
  // Once, here: calls never change a module, so that they can run at once.
  for (auto& member : members_) member.model->eval();
  if (members_.size() == 1) {
    model_ = members_.front().model;
    if (options_.recompute_prefix()) model_ = std::make_shared<PrefixRecomputingModel>(model_);
    model_->eval();
    return;
  }
  if (options_.recompute_prefix()) {
    throw std::invalid_argument("--no-cache is for one checkpoint, not an ensemble");
  }
  std::vector<std::shared_ptr<EncoderDecoder>> models;
  for (const auto& member : members_) models.push_back(member.model);
  ensemble_ = std::make_shared<EnsembleModel>(models, options_.weights(), options_.ensemble_mode());
  ensemble_->eval();
}

Translator::~Translator() = default;

void Translator::check_members() const {
  const Tokenizers& first = members_.front().tokenizers;
  for (size_t i = 1; i < members_.size(); ++i) {
    const Tokenizers& other = members_[i].tokenizers;
    for (const auto& [side, a, b] :
         {std::tuple{"target", first.tgt, other.tgt}, std::tuple{"source", first.src, other.src}}) {
      if (!same_vocabulary(*a, *b)) {
        throw std::invalid_argument(fmt::format(
            "{} and {} have different {} vocabularies ({} and {} pieces, from {} and {}): an "
            "ensemble needs the models to share them",
            paths_.front(), paths_[i], side, a->vocab_size(), b->vocab_size(), a->path(),
            b->path()));
      }
    }
  }
  const std::vector<double>& weights = options_.weights();
  if (!weights.empty() && weights.size() != members_.size()) {
    throw std::invalid_argument(
        fmt::format("--weights has {} values for {} checkpoints", weights.size(), members_.size()));
  }
  for (double weight : weights) {
    if (!(weight > 0) || !std::isfinite(weight)) {
      throw std::invalid_argument(fmt::format("--weights: {} is not a positive weight", weight));
    }
  }
}

SearchOptions Translator::search_options(const std::vector<KeyValue>& overrides) const {
  RunConfig config = this->config();
  const bool nbest_given = std::any_of(overrides.begin(), overrides.end(),
                                       [](const KeyValue& v) { return v.key == "decoding.nbest"; });
  apply_key_values(config, overrides);
  // A smaller beam than the checkpoint's narrows its n-best list with it.
  if (!nbest_given && !config.decoding.sampling) {
    config.decoding.nbest = std::min(config.decoding.nbest, config.decoding.beam);
  }
  check_config(config);
  return SearchOptions(config.decoding);
}

std::optional<AttentionChoice> Translator::attention_choice(size_t i,
                                                            const AttentionChoice& asked) const {
  const ModelConfig& model = members_[i].config.model;
  const std::string& path = paths_[i];
  const AttentionLayout layout = arch_spec(model.arch).cross_attention(model);
  if (layout.layers == 0) return std::nullopt;
  AttentionChoice choice = asked;
  if (choice.layer == AttentionChoice::kPenultimateLayer)
    choice.layer = std::max<int64_t>(0, layout.layers - 2);
  const std::string layers = fmt::format("{} decoder attention layer(s)", layout.layers);
  const std::string heads = fmt::format("{} head(s)", layout.heads);
  if (choice.layer < -1 || choice.layer >= layout.layers) {
    bad_attention_flag(asked.alignment ? "--alignment-layer" : "--attention-layer", choice.layer,
                       false, layers, fmt::format("0..{}, or -1 for their mean", layout.layers - 1),
                       model, path);
  }
  if (choice.heads < 0 || choice.heads > layout.heads) {
    bad_attention_flag("--alignment-heads", choice.heads, true, heads,
                       fmt::format("1..{}, or 0 for all", layout.heads), model, path);
  }
  if (choice.head != -1 && choice.layer == -1) {
    throw std::invalid_argument("--attention-head needs --attention-layer: heads are per layer");
  }
  if (choice.head < -1 || choice.head >= layout.heads) {
    bad_attention_flag("--attention-head", choice.head, true, heads,
                       fmt::format("0..{}, or -1 for their mean", layout.heads - 1), model, path);
  }
  return choice;
}

std::vector<std::optional<AttentionChoice>> Translator::attention_choices(
    const SearchOptions& options) const {
  std::vector<std::optional<AttentionChoice>> choices;
  bool any_attention = false;
  for (size_t i = 0; i < members_.size(); ++i) {
    choices.push_back(attention_choice(i, options.attention));
    any_attention = any_attention || choices.back().has_value();
  }
  // Heatmaps are skipped (the caller warns); alignments and the coverage penalty cannot be.
  if ((options.attention.alignment || options.coverage_penalty > 0) && !any_attention) {
    const std::string what = options.attention.alignment ? "--alignment" : "the coverage penalty";
    throw std::invalid_argument(fmt::format("{} needs cross-attention, but model {} ({}) has none",
                                            what, config().model.arch, paths_.front()));
  }
  return choices;
}

std::shared_ptr<EncoderDecoder> Translator::search_model(SearchOptions& options) const {
  const auto choices = attention_choices(options);
  if (!ensemble_) {
    if (choices.front()) options.attention = *choices.front();
    return model_;
  }
  // The ensemble records the attention the call chose: a combinator of the shared models made for
  // the call (a few pointers), so calls with different choices run at once.
  std::vector<std::shared_ptr<EncoderDecoder>> models;
  for (const auto& member : members_) models.push_back(member.model);
  auto ensemble = std::make_shared<EnsembleModel>(std::move(models), options_.weights(),
                                                  options_.ensemble_mode());
  for (size_t i = 0; i < choices.size(); ++i)
    ensemble->choose_attention(i, choices[i].value_or(AttentionChoice{}));
  // The search reads the ensemble's own recording, the mean of the members' choices: a layer
  // asked of it would be looked up in the ensemble's state, which has none (a c10::Error before).
  AttentionChoice combined;
  combined.alignment = options.attention.alignment;
  options.attention = combined;
  return ensemble;
}

void Translator::prepare(const SearchOptions& options) {
  attention_choices(options);
  check_dtype_runs(options.dtype, options_.device());
  shortlist(options.shortlist);
}

std::string Translator::describe_attention(const SearchOptions& options) const {
  if (ensemble_) return "the models' mean";
  return attention_choice(0, options.attention).value_or(options.attention).describe();
}

std::shared_ptr<const Shortlist> Translator::shortlist(const std::string& path) {
  if (path.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (path != shortlist_path_) {
    shortlist_ = std::make_shared<const Shortlist>(Shortlist::load(path, tokenizers()));
    shortlist_path_ = path;
  }
  return shortlist_;
}

std::vector<Translation> Translator::translate_batch(
    const std::vector<TranslationRequest>& requests, const SearchOptions& options,
    int64_t first_line, const std::function<void(int64_t)>& progress,
    const std::function<void()>& between_steps) {
  SearchOptions resolved = options;
  const std::shared_ptr<EncoderDecoder> model = search_model(resolved);
  TranslationPipeline translator(*model, tokenizers(), resolved, options_.device(), int8_.get(),
                                 shortlist(resolved.shortlist));
  if (progress) translator.on_progress(progress);
  if (between_steps) translator.between_steps(between_steps);
  std::vector<Translation> translations = translator.translate(requests, first_line);
  std::lock_guard<std::mutex> lock(mutex_);
  shortlisted_batches_ += translator.shortlisted_batches();
  shortlisted_tokens_ += translator.shortlisted_tokens();
  return translations;
}

std::vector<Translation> Translator::translate_batch(const std::vector<std::string>& sources,
                                                     const SearchOptions& options,
                                                     int64_t first_line) {
  std::vector<TranslationRequest> requests;
  requests.reserve(sources.size());
  for (const auto& source : sources) requests.push_back({source, {}, {}, {}});
  return translate_batch(requests, options, first_line);
}

std::vector<ScoredPair> Translator::score_batch(const std::vector<std::string>& sources,
                                                const std::vector<std::string>& targets,
                                                const SearchOptions& options,
                                                const std::function<void()>& between_batches) {
  if (sources.size() != targets.size()) {
    throw std::invalid_argument(
        fmt::format("score_batch: {} sources for {} targets", sources.size(), targets.size()));
  }
  torch::NoGradGuard no_grad;
  EncoderDecoder& model =
      ensemble_ ? static_cast<EncoderDecoder&>(*ensemble_) : *members_.front().model;
  const int64_t limit = max_source_tokens();
  std::vector<ScoredPair> results(sources.size());
  std::vector<std::vector<int32_t>> src(sources.size());
  std::vector<std::vector<int32_t>> tgt(sources.size());
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < sources.size(); ++i) {
    src[i] = source_ids(tokenizers(), {sources[i], {}, {}, {}}, options.target_lang,
                        static_cast<int64_t>(i) + 1);
    tgt[i] = tokenizers().tgt->encode(targets[i]);
    for (auto* tokens : {&src[i], &tgt[i]}) {
      if (static_cast<int64_t>(tokens->size()) > limit) {
        tokens->resize(static_cast<size_t>(limit));
        results[i].truncated = true;
      }
    }
    lengths.push_back(static_cast<int64_t>(std::max(src[i].size(), tgt[i].size())) + 1);
  }
  CpuAutocast autocast(options.dtype == DecodeDtype::kBf16 && options_.device().is_cpu());
  for (const auto& batch : make_batches(
           lengths, BatchingOptions{std::max<int64_t>(1, options.batch_tokens), 0, false})) {
    if (between_batches) between_batches();
    std::vector<TokenSpan> src_rows;
    std::vector<TokenSpan> tgt_rows;
    for (int64_t j : batch) {
      src_rows.push_back({src[static_cast<size_t>(j)].data(), src[static_cast<size_t>(j)].size()});
      tgt_rows.push_back({tgt[static_cast<size_t>(j)].data(), tgt[static_cast<size_t>(j)].size()});
    }
    const at::Tensor src_tokens =
        pad_sequences(src_rows, /*add_bos=*/false, /*add_eos=*/true).to(options_.device());
    const at::Tensor tgt_in =
        pad_sequences(tgt_rows, /*add_bos=*/true, /*add_eos=*/false).to(options_.device());
    const at::Tensor tgt_out =
        pad_sequences(tgt_rows, /*add_bos=*/false, /*add_eos=*/true).to(options_.device());
    const at::Tensor log_probs = torch::log_softmax(
        model.forward(src_tokens, src_tokens.eq(kPadId), tgt_in).to(torch::kFloat), -1);
    const at::Tensor picked = log_probs.gather(2, tgt_out.unsqueeze(2))
                                  .squeeze(2)
                                  .to(torch::kCPU, torch::kDouble)
                                  .contiguous();
    for (size_t r = 0; r < batch.size(); ++r) {
      ScoredPair& result = results[static_cast<size_t>(batch[r])];
      const auto& tokens = tgt[static_cast<size_t>(batch[r])];
      const double* row = picked[static_cast<int64_t>(r)].data_ptr<double>();
      for (size_t t = 0; t <= tokens.size(); ++t) {
        if (std::isnan(row[t]) || row[t] == std::numeric_limits<double>::infinity()) {
          throw NonFiniteScores(fmt::format("line {}", batch[r] + 1), static_cast<int64_t>(t),
                                {batch[r] + 1});
        }
        result.token_log_probs.push_back(row[t]);
        result.log_prob += row[t];
        result.tokens.push_back(t < tokens.size() ? tokenizers().tgt->piece(tokens[t]) : "</s>");
      }
    }
  }
  return results;
}

int64_t Translator::max_source_tokens() const {
  return (ensemble_ ? ensemble_->max_positions() : model_->max_positions()) - 1;
}

double Translator::mean_shortlist_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shortlisted_batches_ == 0
             ? 0.0
             : static_cast<double>(shortlisted_tokens_) / static_cast<double>(shortlisted_batches_);
}

}  // namespace nmtzoo
