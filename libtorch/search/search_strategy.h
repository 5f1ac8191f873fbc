// SPDX-License-Identifier: MIT
// The policy of a search step, apart from the bookkeeping (fairseq's search.py `step`,
// CTranslate2's SearchStrategy): given the next-token log-probabilities of every live hypothesis
// and their scores so far, which continuations to consider, best first. The one search loop
// (search.h) keeps hypotheses, finished lists, length limits and the model state; a strategy
// keeps nothing between steps unless it wants to.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace nmtzoo {

struct SearchOptions;
struct SentenceGuide;

// The score of a continuation that is ruled out.
inline constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

struct StepCandidates {
  at::Tensor scores;  // (N, C) cumulative log-probabilities of the continuations, best first
  at::Tensor beams;   // (N, C) long: which of the sentence's K hypotheses each continues
  at::Tensor tokens;  // (N, C) long: the token it appends
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // K: hypotheses kept per sentence.
  virtual int64_t width() const = 0;
  // log_probs (N, K, V) for N live sentences, the search's token rules already applied (-inf =
  // forbidden); scores (N, K) cumulative log-probabilities (-inf for unused hypotheses).
  // `sentences` (N): the batch index of each live sentence, in order.
  // Returns C >= 1 candidates per sentence. The loop takes continuations ending in EOS among the
  // first K as finished and keeps up to K others, so C = 2K never lets EOS starve the beam.
  virtual StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                              const std::vector<int64_t>& sentences) = 0;
  // The rows the loop kept after step(): new row r continues old row parents[r] with tokens[r].
  // For strategies that follow each hypothesis (constraints met so far).
  virtual void select(const std::vector<int64_t>& parents, const std::vector<int64_t>& tokens) {
    (void)parents;
    (void)tokens;
  }
  // Whether the hypothesis in `row` (of the step just taken) ending now is a full result. A
  // strategy with requirements (constraints) says no for hypotheses the length limit forced to
  // end early; those rank after every complete one (Hypothesis::complete).
  virtual bool complete(int64_t row) const {
    (void)row;
    return true;
  }
};

// The K best of all K x V continuations, 2K candidates (fairseq's BeamSearch).
class BeamStrategy : public SearchStrategy {
 public:
  explicit BeamStrategy(int64_t beam);
  int64_t width() const override { return beam_; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                      const std::vector<int64_t>& sentences) override;

 private:
  int64_t beam_;
};

// The most probable next token of the one hypothesis.
class GreedyStrategy : public SearchStrategy {
 public:
  int64_t width() const override { return 1; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                      const std::vector<int64_t>& sentences) override;
};

// Each of K hypotheses per sentence draws its next token from the model's distribution, sharpened
// or flattened by a temperature and cut to the top k tokens and/or the nucleus of mass p (fairseq's
// Sampling). Each sentence has its own generator, seeded from (seed, line), that draws K uniforms
// per step: the output does not depend on batching or threads. The draw is an inverse-CDF lookup
// on the device. Scores stay the model's own log-probabilities of the sampled tokens.
class SamplingStrategy : public SearchStrategy {
 public:
  // `lines`: the input line of each sentence of the batch.
  SamplingStrategy(int64_t samples, double temperature, int64_t top_k, double top_p, uint64_t seed,
                   const std::vector<int64_t>& lines);
  int64_t width() const override { return samples_; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                      const std::vector<int64_t>& sentences) override;

  // The distribution sampled from: log_probs (..., V) after temperature, top-k and top-p, as
  // unnormalised log-weights (-inf = excluded).
  at::Tensor filtered(const at::Tensor& log_probs) const;

 private:
  int64_t samples_;
  double temperature_;
  int64_t top_k_;
  double top_p_;
  std::vector<std::mt19937_64> generators_;  // one per sentence of the batch
};

// The strategy `options` ask for, for one batch: greedy, beam, sampling or constrained beam.
std::unique_ptr<SearchStrategy> make_strategy(const SearchOptions& options,
                                              const std::vector<SentenceGuide>& guides);

}  // namespace nmtzoo
