// SPDX-License-Identifier: MIT
#include "libtorch/search/search_strategy.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "libtorch/kernels/beam_candidates.h"
#include "libtorch/kernels/kernels.h"
#include "libtorch/search/constrained_beam.h"
#include "libtorch/search/search.h"

namespace nmtzoo {

BeamStrategy::BeamStrategy(int64_t beam) : beam_(beam) {
  TORCH_CHECK(beam >= 1, "the beam must hold at least one hypothesis, but got ", beam);
}

StepCandidates BeamStrategy::step(int64_t, const at::Tensor& log_probs, const at::Tensor& scores,
                                  const std::vector<int64_t>&) {
  const int64_t sentences = log_probs.size(0);
  const int64_t vocab = log_probs.size(2);
  const int64_t count = std::min(2 * beam_, beam_ * vocab);
  if (fast_kernels_enabled() && log_probs.device().is_cpu() &&
      log_probs.scalar_type() == torch::kFloat && log_probs.is_contiguous() &&
      scores.scalar_type() == torch::kFloat) {
    auto [top_scores, beams, tokens] = beam_candidates(log_probs, scores, count);
    return {top_scores, beams, tokens};
  }
  at::Tensor candidates = (scores.unsqueeze(2) + log_probs).view({sentences, beam_ * vocab});
  auto [top_scores, top_indices] = candidates.topk(count, 1);
  return {top_scores, top_indices.div(vocab, "floor"), top_indices.remainder(vocab)};
}

StepCandidates GreedyStrategy::step(int64_t, const at::Tensor& log_probs, const at::Tensor& scores,
                                    const std::vector<int64_t>&) {
  auto [best, tokens] = log_probs.select(1, 0).max(-1, /*keepdim=*/true);  // (N, 1)
  return {scores + best, torch::zeros_like(tokens), tokens};
}

namespace {

// (R, V) log-weights -> (R, V) true where a token is outside the nucleus of mass p: a token is
// kept while the probability mass of the tokens ranked before it is below p (the smallest set
// reaching p). Sorting a whole vocabulary per row costs more than the model's step, so the
// nucleus is first sought among each row's 64 most probable tokens, which hold it in almost every
// row; only rows they do not cover are sorted in full. Both paths give the same set.
at::Tensor outside_nucleus(const at::Tensor& weights, double p) {
  const int64_t vocab = weights.size(1);
  const at::Tensor total = weights.logsumexp(-1, /*keepdim=*/true);
  auto mask_from_ranked = [&](const at::Tensor& ranked_weights, const at::Tensor& order,
                              const at::Tensor& row_total, int64_t rows) {
    at::Tensor probs = (ranked_weights - row_total).exp();
    at::Tensor cumulative = probs.cumsum(-1);
    at::Tensor kept_ranked = (cumulative - probs) < p;
    at::Tensor kept =
        torch::zeros({rows, vocab}, kept_ranked.options()).scatter(-1, order, kept_ranked);
    return std::pair{kept.logical_not(), cumulative.select(1, -1) >= p};
  };
  const int64_t head = std::min<int64_t>(vocab, 64);
  auto [top, top_order] = weights.topk(head, -1);
  auto [outside, covered] = mask_from_ranked(top, top_order, total, weights.size(0));
  at::Tensor uncovered = covered.logical_not().nonzero().view({-1});
  if (uncovered.numel() > 0 && head < vocab) {
    at::Tensor rows = weights.index_select(0, uncovered);
    auto [sorted, order] = rows.sort(-1, /*descending=*/true);
    outside.index_copy_(
        0, uncovered,
        mask_from_ranked(sorted, order, total.index_select(0, uncovered), rows.size(0)).first);
  }
  return outside;
}

// A generator of its own per (seed, line), independent of the other lines'.
std::mt19937_64 line_generator(uint64_t seed, int64_t line) {
  const auto l = static_cast<uint64_t>(line);
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                         static_cast<uint32_t>(l), static_cast<uint32_t>(l >> 32)};
  return std::mt19937_64(sequence);
}

// A uniform double in [0, 1) from the top 53 bits (std::uniform_real_distribution is
// implementation-defined, so it would make samples depend on the standard library).
double uniform(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

}  // namespace

SamplingStrategy::SamplingStrategy(int64_t samples, double temperature, int64_t top_k, double top_p,
                                   uint64_t seed, const std::vector<int64_t>& lines)
    : samples_(samples), temperature_(temperature), top_k_(top_k), top_p_(top_p) {
  TORCH_CHECK(samples >= 1, "sampling needs at least one sample per sentence, but got ", samples);
  // The log-probabilities (float32) are divided by it: T and 1/T must both be finite there, or
  // every weight becomes 0 or NaN and nothing can be sampled (decoding.temperature is in
  // [1e-6, 1e6]).
  TORCH_CHECK(
      temperature > 0 && std::isfinite(static_cast<float>(temperature)) &&
          std::isfinite(static_cast<float>(1.0 / temperature)),
      "the sampling temperature must be positive with T and 1/T finite in float32, but got ",
      temperature);
  TORCH_CHECK(top_k >= 0, "top-k must be >= 0 (0 = all tokens), but got ", top_k);
  TORCH_CHECK(top_p > 0 && top_p <= 1, "top-p must be in (0, 1], but got ", top_p);
  for (int64_t line : lines) generators_.push_back(line_generator(seed, line));
}

at::Tensor SamplingStrategy::filtered(const at::Tensor& log_probs) const {
  at::Tensor weights = temperature_ == 1.0 ? log_probs.clone() : log_probs / temperature_;
  const int64_t vocab = weights.size(-1);
  if (top_k_ > 0 && top_k_ < vocab) {
    at::Tensor kth = std::get<0>(weights.topk(top_k_, -1)).narrow(-1, top_k_ - 1, 1);
    weights.masked_fill_(weights < kth, kMinusInf);
  }
  if (top_p_ < 1.0)
    weights.masked_fill_(outside_nucleus(weights.reshape({-1, vocab}), top_p_).view_as(weights),
                         kMinusInf);
  return weights;
}

StepCandidates SamplingStrategy::step(int64_t step, const at::Tensor& log_probs,
                                      const at::Tensor& scores,
                                      const std::vector<int64_t>& sentences) {
  const int64_t N = log_probs.size(0);
  const int64_t K = samples_;
  const int64_t V = log_probs.size(2);
  std::vector<double> draws;
  draws.reserve(static_cast<size_t>(N * K));
  for (int64_t sentence : sentences) {
    TORCH_CHECK(sentence < static_cast<int64_t>(generators_.size()),
                "sampling has no generator for "
                "sentence ",
                sentence, " of the batch");
    for (int64_t k = 0; k < K; ++k)
      draws.push_back(uniform(generators_[static_cast<size_t>(sentence)]));
  }
  // Inverse CDF: the first token whose cumulative weight exceeds u * total.
  at::Tensor probs = filtered(log_probs).softmax(-1).nan_to_num(0.0);
  at::Tensor cdf = probs.cumsum(-1);
  at::Tensor u =
      torch::tensor(draws, torch::kDouble).to(cdf.device(), cdf.scalar_type()).view({N, K, 1});
  at::Tensor target = u * cdf.narrow(-1, V - 1, 1);
  at::Tensor tokens = torch::searchsorted(cdf, target, /*out_int32=*/false, /*right=*/true)
                          .clamp_max(V - 1)
                          .squeeze(-1);  // (N, K)
  // At the first step all K hypotheses continue the same empty prefix.
  at::Tensor so_far = step == 0 ? torch::zeros_like(scores) : scores;
  at::Tensor sampled = so_far + log_probs.gather(2, tokens.unsqueeze(2)).squeeze(2);
  auto [ranked, order] = sampled.sort(1, /*descending=*/true);  // the loop wants best first
  return {ranked, order, tokens.gather(1, order)};
}

std::unique_ptr<SearchStrategy> make_strategy(const SearchOptions& options,
                                              const std::vector<SentenceGuide>& guides) {
  if (options.sampling) {
    std::vector<int64_t> lines;
    for (const auto& guide : guides) lines.push_back(guide.line);
    TORCH_CHECK(!lines.empty(), "sampling needs each sentence's line (a SentenceGuide) to seed it");
    return std::make_unique<SamplingStrategy>(options.nbest, options.temperature, options.top_k,
                                              options.top_p, static_cast<uint64_t>(options.seed),
                                              lines);
  }
  if (options.constraints != ConstraintMode::kNone) {
    TORCH_CHECK(!guides.empty(),
                "constrained search needs each sentence's constraints (a SentenceGuide)");
    std::vector<std::vector<std::vector<int64_t>>> constraints;
    for (const auto& guide : guides) constraints.push_back(guide.constraints);
    const auto sentences = static_cast<int64_t>(constraints.size());
    return std::make_unique<ConstrainedBeamStrategy>(
        options.beam,
        ConstraintTracker(std::move(constraints), options.constraints == ConstraintMode::kOrdered),
        sentences);
  }
  if (options.beam == 1 && options.nbest == 1) return std::make_unique<GreedyStrategy>();
  return std::make_unique<BeamStrategy>(options.beam);
}

}  // namespace nmtzoo
