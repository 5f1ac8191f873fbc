// The policy of a search step, apart from the bookkeeping (fairseq's search.py `step`,
// CTranslate2's SearchStrategy): given the next-token log-probabilities of every live hypothesis
// and their scores so far, which continuations to consider, best first. The one search loop
// (search.h) keeps hypotheses, finished lists, length limits and the model state; a strategy
// keeps nothing between steps unless it wants to.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmtzoo {

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
  // log_probs (N, K, V) for N live sentences, search constraints already applied (-inf =
  // forbidden); scores (N, K) cumulative log-probabilities (-inf for unused hypotheses).
  // Returns C >= 1 candidates per sentence. The loop takes continuations ending in EOS among the
  // first K as finished and keeps up to K others, so C = 2K never lets EOS starve the beam.
  virtual StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores) = 0;
};

// The K best of all K x V continuations, 2K candidates (fairseq's BeamSearch).
class BeamStrategy : public SearchStrategy {
 public:
  explicit BeamStrategy(int64_t beam);
  int64_t width() const override { return beam_; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores) override;

 private:
  int64_t beam_;
};

// The most probable next token of the one hypothesis.
class GreedyStrategy : public SearchStrategy {
 public:
  int64_t width() const override { return 1; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores) override;
};

}  // namespace nmtzoo
