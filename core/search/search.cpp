#include "core/search/search.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/search/search_strategy.h"
#include "models/encoder_decoder.h"
#include "tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// (R, S) cross-attention of the last step, of the chosen layer and head or their mean.
at::Tensor step_attention(const DecoderState& state, const SearchOptions& options) {
  if (options.attention_layer < 0) return state.attention;
  TORCH_CHECK(options.attention_layer < static_cast<int64_t>(state.layer_attention.size()),
              "attention layer ", options.attention_layer, " does not exist; the model has ",
              state.layer_attention.size());
  const at::Tensor& heads = state.layer_attention[static_cast<size_t>(options.attention_layer)];
  if (options.attention_head < 0) return heads.mean(1);
  TORCH_CHECK(options.attention_head < heads.size(1), "attention head ", options.attention_head,
              " does not exist; the layer has ", heads.size(1));
  return heads.select(1, options.attention_head);
}

std::vector<int64_t> length_limits(EncoderDecoder& model, const at::Tensor& src_pad_mask,
                                   const SearchOptions& options) {
  at::Tensor lengths = src_pad_mask.logical_not().sum(1).to(torch::kCPU);
  std::vector<int64_t> limits;
  const int64_t model_limit = model.max_positions() - 1;  // BOS + tokens fit the positions
  for (int64_t b = 0; b < lengths.size(0); ++b) {
    const double source_length = static_cast<double>(lengths[b].item<int64_t>() - 1);  // no EOS
    // In double: a huge max_len_b must clamp to the model's limit, not overflow.
    const double limit = options.max_len_a * source_length + static_cast<double>(options.max_len_b);
    limits.push_back(std::max<int64_t>(
        1, static_cast<int64_t>(std::min(limit, static_cast<double>(model_limit)))));
  }
  return limits;
}

// Forbids BOS and PAD always, EOS before min_len, and everything but EOS at a row's length
// limit.
void apply_constraints(at::Tensor& log_probs, int64_t step, const std::vector<int64_t>& row_limits,
                       const SearchOptions& options) {
  log_probs.index_fill_(1, torch::tensor({kPadId, kBosId}, log_probs.options().dtype(torch::kLong)),
                        kMinusInf);
  if (step < options.min_len) log_probs.select(1, kEosId).fill_(kMinusInf);
  std::vector<int64_t> at_limit;
  for (size_t r = 0; r < row_limits.size(); ++r) {
    if (step >= row_limits[r]) at_limit.push_back(static_cast<int64_t>(r));
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

at::Tensor to_device_index(const std::vector<int64_t>& rows, const c10::Device& device) {
  return torch::tensor(rows, torch::kLong).to(device);
}

// The rows of the next step: for each, the row it continues, the token it appends and its score.
struct NextRows {
  std::vector<int64_t> parents;
  std::vector<int64_t> tokens;
  std::vector<double> scores;
  bool sentences_changed = false;  // a sentence finished and left the batch
};

// The loop's bookkeeping, on the host: which sentences are alive (K rows each, row = block * K +
// hypothesis), each row's tokens, and each sentence's finished hypotheses.
class HypothesisBook {
 public:
  HypothesisBook(int64_t batch, int64_t width, const SearchOptions& options)
      : width_(width), options_(options), finished_(static_cast<size_t>(batch)),
        alive_(static_cast<size_t>(batch)), row_tokens_(static_cast<size_t>(batch * width)) {
    std::iota(alive_.begin(), alive_.end(), 0);
  }

  bool empty() const { return alive_.empty(); }

  // Each live row's length limit, from each sentence's.
  std::vector<int64_t> row_limits(const std::vector<int64_t>& sentence_limits) const {
    std::vector<int64_t> limits;
    for (int64_t s : alive_) limits.insert(limits.end(), static_cast<size_t>(width_), sentence_limits[s]);
    return limits;
  }

  // Takes a step's candidates (best first per live sentence): those ending in EOS among the first K
  // are finished (up to K per sentence), up to K others continue. A sentence with K finished or
  // no live candidate leaves. `history` (R, t, S), when defined, is each row's attention so far.
  NextRows advance(const StepCandidates& candidates, const at::Tensor& history) {
    at::Tensor cpu_values = candidates.scores.to(torch::kCPU, torch::kDouble);
    at::Tensor cpu_beams = candidates.beams.to(torch::kCPU);
    at::Tensor cpu_tokens = candidates.tokens.to(torch::kCPU);
    auto value = cpu_values.accessor<double, 2>();
    auto beam = cpu_beams.accessor<int64_t, 2>();
    auto candidate_token = cpu_tokens.accessor<int64_t, 2>();
    const int64_t K = width_;
    NextRows next;
    std::vector<int64_t> next_alive;
    for (int64_t b = 0; b < static_cast<int64_t>(alive_.size()); ++b) {
      auto& done = finished_[alive_[b]];
      std::vector<int64_t> rows;
      std::vector<int64_t> tokens;
      std::vector<double> block_scores;
      for (int64_t j = 0; j < cpu_values.size(1) && static_cast<int64_t>(rows.size()) < K; ++j) {
        if (std::isinf(value[b][j])) break;
        const int64_t parent = b * K + beam[b][j];
        const int64_t token = candidate_token[b][j];
        if (token == kEosId) {
          if (j < K && static_cast<int64_t>(done.size()) < K) done.push_back(finish(parent, value[b][j], history));
          continue;
        }
        rows.push_back(parent);
        tokens.push_back(token);
        block_scores.push_back(value[b][j]);
      }
      if (static_cast<int64_t>(done.size()) >= K || rows.empty()) continue;  // sentence done
      while (static_cast<int64_t>(rows.size()) < K) {  // too few live candidates: pad, never chosen
        rows.push_back(rows.front());
        tokens.push_back(tokens.front());
        block_scores.push_back(kMinusInf);
      }
      next_alive.push_back(alive_[b]);
      next.parents.insert(next.parents.end(), rows.begin(), rows.end());
      next.tokens.insert(next.tokens.end(), tokens.begin(), tokens.end());
      next.scores.insert(next.scores.end(), block_scores.begin(), block_scores.end());
    }
    next.sentences_changed = next_alive.size() != alive_.size();
    alive_ = std::move(next_alive);
    std::vector<std::vector<int64_t>> new_row_tokens;
    new_row_tokens.reserve(next.parents.size());
    for (size_t r = 0; r < next.parents.size(); ++r) {
      new_row_tokens.push_back(row_tokens_[next.parents[r]]);
      new_row_tokens.back().push_back(next.tokens[r]);
    }
    row_tokens_ = std::move(new_row_tokens);
    return next;
  }

  // Each sentence's finished hypotheses, best first, at most `nbest`.
  std::vector<std::vector<Hypothesis>> results(int64_t nbest) {
    for (auto& done : finished_) {
      std::stable_sort(done.begin(), done.end(),
                       [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      done.resize(std::min<size_t>(done.size(), static_cast<size_t>(nbest)));
    }
    return std::move(finished_);
  }

 private:
  Hypothesis finish(int64_t row, double log_prob, const at::Tensor& history) const {
    Hypothesis hypothesis;
    hypothesis.tokens = row_tokens_[row];
    hypothesis.log_prob = log_prob;
    hypothesis.score = penalized_score(log_prob, static_cast<int64_t>(hypothesis.tokens.size()) + 1,
                                       options_.length_penalty, options_.alpha);
    if (history.defined()) hypothesis.attention = history[row].to(torch::kCPU);
    return hypothesis;
  }

  int64_t width_;
  const SearchOptions& options_;
  std::vector<std::vector<Hypothesis>> finished_;
  std::vector<int64_t> alive_;                   // the sentence of each block of K rows
  std::vector<std::vector<int64_t>> row_tokens_;
};

}  // namespace

SearchOptions SearchOptions::from(const DecodeConfig& config) {
  SearchOptions options;
  options.beam = config.beam;
  options.nbest = config.nbest;
  options.length_penalty = config.length_penalty;
  options.alpha = config.alpha;
  options.max_len_a = config.max_len_a;
  options.max_len_b = config.max_len_b;
  options.min_len = config.min_len;
  return options;
}

double penalized_score(double log_prob, int64_t length, LengthPenalty penalty, double alpha) {
  switch (penalty) {
    case LengthPenalty::kNone: return log_prob;
    case LengthPenalty::kAverage: return log_prob / std::pow(static_cast<double>(length), alpha);
    case LengthPenalty::kWu: return log_prob / std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
  }
  return log_prob;
}

std::vector<std::vector<Hypothesis>> search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                            const at::Tensor& src_pad_mask,
                                            const SearchOptions& options, SearchStrategy& strategy) {
  const int64_t K = strategy.width();
  TORCH_CHECK(K >= 1 && options.nbest >= 1 && options.nbest <= K,
              "need 1 <= nbest <= beam, but got nbest ", options.nbest, " and beam ", K);
  torch::NoGradGuard no_grad;
  const int64_t batch = src_tokens.size(0);
  const auto device = src_tokens.device();
  DecoderState state = model.encode(src_tokens, src_pad_mask);
  state.record_attention = options.record_attention;
  state.repeat_rows(K);
  const std::vector<int64_t> limits = length_limits(model, src_pad_mask, options);
  HypothesisBook book(batch, K, options);
  at::Tensor history;  // (R, t, S) attention of each row so far, when recorded
  // Cumulative log-probabilities (R); only hypothesis 0 of each sentence is live at the start.
  at::Tensor scores = torch::full({batch, K}, kMinusInf, torch::TensorOptions().device(device));
  scores.select(1, 0).fill_(0.0);
  scores = scores.view({-1});
  at::Tensor prev = torch::full({batch * K}, kBosId, torch::TensorOptions(torch::kLong).device(device));

  for (int64_t step = 0; !book.empty(); ++step) {
    at::Tensor log_probs = model.decode_step(prev, state);  // (R, V)
    apply_constraints(log_probs, step, book.row_limits(limits), options);
    if (options.record_attention && state.attention.defined()) {  // undefined: no attention
      at::Tensor now = step_attention(state, options).unsqueeze(1);
      history = history.defined() ? torch::cat({history, now}, 1) : now;
    }
    const int64_t blocks = log_probs.size(0) / K;
    NextRows next = book.advance(
        strategy.step(step, log_probs.view({blocks, K, -1}), scores.view({blocks, K})), history);
    if (next.parents.empty()) break;
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

std::vector<std::vector<Hypothesis>> beam_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                                 const at::Tensor& src_pad_mask,
                                                 const SearchOptions& options) {
  BeamStrategy strategy(options.beam);
  return search(model, src_tokens, src_pad_mask, options, strategy);
}

std::vector<Hypothesis> greedy_search(EncoderDecoder& model, const at::Tensor& src_tokens,
                                      const at::Tensor& src_pad_mask, const SearchOptions& options) {
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
