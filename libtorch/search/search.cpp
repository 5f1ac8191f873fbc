// SPDX-License-Identifier: MIT
#include "libtorch/search/search.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "libtorch/models/encoder_decoder.h"
#include "libtorch/search/hypothesis_book.h"
#include "libtorch/search/search_strategy.h"
#include "torch_free/config/loader.h"
#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

const DecodeConfig& schema_decoding_defaults() {
  static const DecodeConfig defaults = default_config().decoding;
  return defaults;
}

// Each sentence's source length in tokens, EOS included.
std::vector<int64_t> source_lengths(const at::Tensor& src_pad_mask) {
  at::Tensor lengths = src_pad_mask.logical_not().sum(1).to(torch::kCPU, torch::kLong).contiguous();
  return {lengths.data_ptr<int64_t>(), lengths.data_ptr<int64_t>() + lengths.numel()};
}

// Tokens a guide adds to the output beyond what the source asks for: its prefix and constraints.
int64_t guided_tokens(const std::vector<SentenceGuide>& guides, size_t sentence) {
  if (guides.empty()) return 0;
  const SentenceGuide& guide = guides[sentence];
  auto total = static_cast<int64_t>(guide.prefix.size());
  for (const auto& phrase : guide.constraints) total += static_cast<int64_t>(phrase.size());
  return total;
}

// Forbids BOS and PAD always, EOS before a row's minimum length, and everything but EOS at a
// row's length limit; applies the <unk> penalty.
void apply_token_rules(at::Tensor& log_probs, int64_t step, const std::vector<int64_t>& row_limits,
                       const std::vector<int64_t>& row_min_lens, const SearchOptions& options) {
  log_probs.index_fill_(1, torch::tensor({kPadId, kBosId}, log_probs.options().dtype(torch::kLong)),
                        kMinusInf);
  if (options.unk_penalty != 0) log_probs.select(1, kUnkId).sub_(options.unk_penalty);
  std::vector<int64_t> too_short;
  std::vector<int64_t> at_limit;
  for (size_t r = 0; r < row_limits.size(); ++r) {
    if (step < row_min_lens[r]) too_short.push_back(static_cast<int64_t>(r));
    if (step >= row_limits[r]) at_limit.push_back(static_cast<int64_t>(r));
  }
  if (too_short.size() == row_limits.size()) {
    log_probs.select(1, kEosId).fill_(kMinusInf);
  } else if (!too_short.empty()) {
    log_probs.select(1, kEosId).index_fill_(
        0, torch::tensor(too_short, log_probs.options().dtype(torch::kLong)), kMinusInf);
  }
  if (!at_limit.empty()) {
    // Only EOS remains, with the probability the model gives it (as fairseq does).
    auto rows = torch::tensor(at_limit, log_probs.options().dtype(torch::kLong));
    auto forced = torch::full({static_cast<int64_t>(at_limit.size()), log_probs.size(1)}, kMinusInf,
                              log_probs.options());
    forced.select(1, kEosId).copy_(log_probs.index_select(0, rows).select(1, kEosId));
    log_probs.index_copy_(0, rows, forced);
  }
}

// Rows whose sentence's prefix is not yet complete may only take the prefix's next token, with
// the probability the model gives it.
void force_prefixes(at::Tensor& log_probs, int64_t step, const std::vector<int64_t>& row_sentences,
                    const std::vector<SentenceGuide>& guides) {
  if (guides.empty()) return;
  std::vector<int64_t> rows;
  std::vector<int64_t> tokens;
  for (size_t r = 0; r < row_sentences.size(); ++r) {
    const auto& prefix = guides[static_cast<size_t>(row_sentences[r])].prefix;
    if (step < static_cast<int64_t>(prefix.size())) {
      rows.push_back(static_cast<int64_t>(r));
      tokens.push_back(prefix[static_cast<size_t>(step)]);
    }
  }
  if (rows.empty()) return;
  const auto index_options = log_probs.options().dtype(torch::kLong);
  at::Tensor row_index = torch::tensor(rows, index_options);
  at::Tensor token_index = torch::tensor(tokens, index_options).unsqueeze(1);
  at::Tensor kept = log_probs.index_select(0, row_index).gather(1, token_index);
  at::Tensor forced =
      torch::full({row_index.size(0), log_probs.size(1)}, kMinusInf, log_probs.options());
  forced.scatter_(1, token_index, kept);
  log_probs.index_copy_(0, row_index, forced);
}

// The guides with their prefixes written as columns of the shortlist `vocabulary` (sorted ids).
std::vector<SentenceGuide> prefixes_as_columns(std::vector<SentenceGuide> guides,
                                               const at::Tensor& vocabulary) {
  at::Tensor ids = vocabulary.to(torch::kCPU, torch::kLong).contiguous();
  const int64_t* begin = ids.data_ptr<int64_t>();
  const int64_t* end = begin + ids.numel();
  for (auto& guide : guides) {
    for (int64_t& token : guide.prefix) {
      const int64_t* found = std::lower_bound(begin, end, token);
      TORCH_CHECK(found != end && *found == token, "prefix token ", token,
                  " is not in the shortlist");
      token = found - begin;
    }
  }
  return guides;
}

void check_shortlist(const at::Tensor& vocabulary) {
  TORCH_CHECK(vocabulary.dim() == 1 && vocabulary.scalar_type() == torch::kLong &&
                  vocabulary.size(0) > kEosId,
              "a shortlist is a 1-D long tensor of sorted target ids from 0, got ",
              vocabulary.sizes(), " ", vocabulary.scalar_type());
  TORCH_CHECK(
      vocabulary.narrow(0, 0, kEosId + 1).cpu().equal(torch::arange(kEosId + 1, torch::kLong)),
      "a shortlist must start with the special ids 0..", kEosId);
  TORCH_CHECK(vocabulary.size(0) == 1 || (vocabulary.narrow(0, 1, vocabulary.size(0) - 1) >
                                          vocabulary.narrow(0, 0, vocabulary.size(0) - 1))
                                             .all()
                                             .item<bool>(),
              "a shortlist's ids must be sorted and distinct");
}

at::Tensor to_device_index(const std::vector<int64_t>& rows, const c10::Device& device) {
  return torch::tensor(rows, torch::kLong).to(device);
}

void throw_first_problem(const DecodeConfig& decoding) {
  for (const auto& problem : decoding.validate()) {
    throw std::invalid_argument("decoding." + problem.key + " " + problem.message);
  }
}

}  // namespace

SearchOptions::SearchOptions() : SearchOptions(schema_decoding_defaults()) {}

SearchOptions::SearchOptions(const DecodeConfig& decoding) : DecodeConfig(decoding) {
  throw_first_problem(*this);
  if (bf16) dtype = DecodeDtype::kBf16;
}

std::string AttentionChoice::describe() const {
  if (layer < 0) return "mean of layers and heads";
  if (head >= 0) return fmt::format("layer {}, head {}", layer, head);
  if (heads > 0) return fmt::format("layer {}, mean of the first {} heads", layer, heads);
  return fmt::format("layer {}, mean of heads", layer);
}

at::Tensor selected_attention(const DecoderState& state, const AttentionChoice& choice) {
  const int64_t layer = choice.layer;
  const int64_t head = choice.head;
  const int64_t heads = choice.heads;
  if (layer < 0) return state.attention;
  TORCH_CHECK(layer < static_cast<int64_t>(state.layer_attention.size()), "attention layer ", layer,
              " does not exist; the model has ", state.layer_attention.size());
  const at::Tensor& all = state.layer_attention[static_cast<size_t>(layer)];  // (R, H, S)
  if (head >= 0) {
    TORCH_CHECK(head < all.size(1), "attention head ", head, " does not exist; the layer has ",
                all.size(1));
    return all.select(1, head);
  }
  TORCH_CHECK(heads <= all.size(1), "cannot average the first ", heads,
              " attention heads; the layer has ", all.size(1));
  return heads > 0 ? all.narrow(1, 0, heads).mean(1) : all.mean(1);
}

std::vector<int64_t> output_length_limits(int64_t max_positions,
                                          const std::vector<int64_t>& source_lengths,
                                          const SearchOptions& options,
                                          const std::vector<SentenceGuide>& guides) {
  TORCH_CHECK(guides.empty() || guides.size() == source_lengths.size(), "output_length_limits got ",
              guides.size(), " sentence guides for ", source_lengths.size(), " sentences");
  std::vector<int64_t> limits;
  const int64_t model_limit = max_positions - 1;  // BOS + tokens fit the positions
  for (size_t b = 0; b < source_lengths.size(); ++b) {
    const double source_length = static_cast<double>(source_lengths[b] - 1);  // no EOS
    // In double: a huge max_len_b must clamp to the model's limit, not overflow.
    const double limit = options.max_len_a * source_length +
                         static_cast<double>(options.max_len_b) +
                         static_cast<double>(guided_tokens(guides, b));
    limits.push_back(std::max<int64_t>(
        1, static_cast<int64_t>(std::min(limit, static_cast<double>(model_limit)))));
  }
  return limits;
}

double penalized_score(double log_prob, int64_t length, LengthPenalty penalty, double alpha) {
  switch (penalty) {
    case LengthPenalty::kNone:
      return log_prob;
    case LengthPenalty::kAverage:
      return log_prob / std::pow(static_cast<double>(length), alpha);
    case LengthPenalty::kWu:
      return log_prob / std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
  }
  return log_prob;
}

NonFiniteScores::NonFiniteScores(const std::string& where, int64_t step,
                                 std::vector<int64_t> sentences)
    : std::runtime_error(fmt::format(
          "{}: the model's scores are not finite numbers (NaN or infinity) at output token {}: "
          "its activations overflow (decoding.dtype float32 instead of bf16 may avoid it; "
          "otherwise the checkpoint's weights are unusable); stopped rather than output them",
          where, step + 1)),
      step(step),
      sentences(std::move(sentences)) {}

std::vector<std::vector<Hypothesis>> search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                            const at::Tensor& src_pad_mask,
                                            const SearchOptions& options, SearchStrategy& strategy,
                                            const std::vector<SentenceGuide>& guides,
                                            const at::Tensor& vocabulary,
                                            const std::function<void()>& between_steps) {
  throw_first_problem(options);
  const int64_t K = strategy.width();
  TORCH_CHECK(K >= 1 && options.nbest >= 1 && options.nbest <= K, "a search strategy keeping ", K,
              " hypotheses for nbest ", options.nbest);
  torch::NoGradGuard no_grad;
  const int64_t batch = src_tokens.size(0);
  TORCH_CHECK(guides.empty() || static_cast<int64_t>(guides.size()) == batch, "search got ",
              guides.size(), " sentence guides for ", batch, " sentences");
  const auto device = src_tokens.device();
  DecoderState state = model.encode(src_tokens, src_pad_mask);
  state.record_attention = options.needs_attention();
  std::vector<SentenceGuide> column_guides;
  if (vocabulary.defined()) {
    check_shortlist(vocabulary);
    state.vocabulary = vocabulary.to(device);
    column_guides = prefixes_as_columns(guides, vocabulary);
  }
  // The log-probabilities' columns are ids, or shortlist positions.
  const std::vector<SentenceGuide>& step_guides = vocabulary.defined() ? column_guides : guides;
  state.repeat_rows(K);
  const std::vector<int64_t> lengths = source_lengths(src_pad_mask);
  const std::vector<int64_t> limits =
      output_length_limits(model.max_positions(), lengths, options, guides);
  std::vector<int64_t> min_lens;
  for (int64_t limit : limits) min_lens.push_back(effective_min_len(options.min_len, limit));
  HypothesisBook book(batch, K, options, lengths);
  size_t longest_prefix = 0;
  for (const auto& guide : guides) longest_prefix = std::max(longest_prefix, guide.prefix.size());
  // Forced past the limit, a prefix would leave no token allowed (TranslationPipeline refuses such
  // lines first, naming them).
  TORCH_CHECK(static_cast<int64_t>(longest_prefix) < model.max_positions(), "a target prefix of ",
              longest_prefix, " tokens does not fit the model's ", model.max_positions() - 1,
              " output positions (max_positions ", model.max_positions(), ", one for BOS)");
  at::Tensor history;  // (R, t, S) attention of each row so far, when recorded
  // Cumulative log-probabilities (R); only hypothesis 0 of each sentence is live at the start.
  at::Tensor scores = torch::full({batch, K}, kMinusInf, torch::TensorOptions().device(device));
  scores.select(1, 0).fill_(0.0);
  scores = scores.view({-1});
  at::Tensor prev =
      torch::full({batch * K}, kBosId, torch::TensorOptions(torch::kLong).device(device));

  for (int64_t step = 0; !book.empty(); ++step) {
    if (between_steps) between_steps();
    at::Tensor log_probs = model.decode_step(prev, state);  // (R, V)
    apply_token_rules(log_probs, step, book.per_row(limits), book.per_row(min_lens), options);
    if (step < static_cast<int64_t>(longest_prefix))
      force_prefixes(log_probs, step, book.row_sentences(), step_guides);
    if (state.record_attention && (state.attention.defined() || !state.layer_attention.empty())) {
      at::Tensor now = selected_attention(state, options.attention).unsqueeze(1);
      history = history.defined() ? torch::cat({history, now}, 1) : now;
    }
    const int64_t blocks = log_probs.size(0) / K;
    StepCandidates candidates = strategy.step(step, log_probs.view({blocks, K, -1}),
                                              scores.view({blocks, K}), book.sentences());
    if (vocabulary.defined()) {
      candidates.tokens = state.vocabulary.index_select(0, candidates.tokens.reshape({-1}))
                              .view_as(candidates.tokens);
    }
    NextRows next = book.advance(candidates, strategy, history);
    if (!next.non_finite.empty()) {
      throw NonFiniteScores(
          fmt::format("sentence(s) {} of the batch", fmt::join(next.non_finite, ", ")), step,
          next.non_finite);
    }
    if (next.parents.empty()) break;
    strategy.select(next.parents, next.tokens);
    at::Tensor rows = to_device_index(next.parents, device);
    // Source entries are identical within a sentence's block: reorder them only when the set of
    // sentences changes.
    state.reorder(rows, next.sentences_changed);
    if (history.defined()) history = history.index_select(0, rows);
    scores = torch::tensor(next.scores, torch::kDouble).to(device, torch::kFloat);
    prev = to_device_index(next.tokens, device);
  }
  return book.results(options.nbest);
}

std::vector<std::vector<Hypothesis>> beam_search(EncoderDecoder& model,
                                                 const at::Tensor& src_tokens,
                                                 const at::Tensor& src_pad_mask,
                                                 const SearchOptions& options) {
  BeamStrategy strategy(options.beam);
  return search(model, src_tokens, src_pad_mask, options, strategy);
}

std::vector<Hypothesis> greedy_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                      const at::Tensor& src_pad_mask,
                                      const SearchOptions& options) {
  SearchOptions one = options;
  one.nbest = 1;
  GreedyStrategy strategy;
  std::vector<Hypothesis> results;
  for (auto& nbest : search(model, src_tokens, src_pad_mask, one, strategy)) {
    results.push_back(nbest.empty() ? Hypothesis() : std::move(nbest.front()));
  }
  return results;
}

}  // namespace nmtzoo
