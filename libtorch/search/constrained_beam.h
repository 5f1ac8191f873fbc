// SPDX-License-Identifier: MIT
// Lexically constrained beam search: every output must contain each of its sentence's constraint
// phrases (token sequences), in the given order or in any order (fairseq's --constraints ordered
// | unordered). The beam is shared out by dynamic beam allocation (Post & Vilar, NAACL 2018;
// Hu et al., NAACL 2019): each step's candidates are the beam's best continuations, each
// hypothesis's best token and every token that advances a hypothesis through its constraints;
// candidates are grouped in banks by the number of constraint tokens met and the beam is filled
// from the banks in turn, fullest bank first, so hypotheses that took a constraint are not crowded
// out by likelier ones that did not. EOS is allowed only once every constraint is met (unless the
// length limit leaves nothing else, so every sentence gets an output).
//
// Candidate scores are computed for the whole batch on the device; the bank allocation runs on
// the host over at most K * (3 + constraint tokens) candidates per sentence.
#pragma once

#include <cstdint>
#include <vector>

#include "libtorch/search/search_strategy.h"

namespace nmtzoo {

// Where one hypothesis stands in its sentence's constraints.
struct ConstraintState {
  int64_t sentence = 0;
  std::vector<char> met;           // per constraint
  int64_t progress = 0;            // tokens of the phrase(s) under way matched so far
  std::vector<int32_t> under_way;  // constraints whose first `progress` tokens end the output
};

// The constraints of one batch and the rules to follow them.
class ConstraintTracker {
 public:
  // constraints[sentence] = that sentence's phrases.
  ConstraintTracker(std::vector<std::vector<std::vector<int64_t>>> constraints, bool ordered);

  ConstraintState initial(int64_t sentence) const;
  ConstraintState advance(const ConstraintState& state, int64_t token) const;
  // Tokens that would take the state further: the next token of the phrases under way, and the
  // first token of every phrase that may start now.
  std::vector<int64_t> next_tokens(const ConstraintState& state) const;
  int64_t met_tokens(const ConstraintState& state) const;  // the state's bank
  bool all_met(const ConstraintState& state) const;

 private:
  bool may_start(const ConstraintState& state, size_t constraint) const;
  ConstraintState start(ConstraintState state, int64_t token) const;
  void complete(ConstraintState& state, size_t constraint) const;

  std::vector<std::vector<std::vector<int64_t>>> constraints_;
  bool ordered_;
};

class ConstrainedBeamStrategy : public SearchStrategy {
 public:
  ConstrainedBeamStrategy(int64_t beam, ConstraintTracker tracker, int64_t sentences);
  int64_t width() const override { return beam_; }
  StepCandidates step(int64_t step, const at::Tensor& log_probs, const at::Tensor& scores,
                      const std::vector<int64_t>& sentences) override;
  void select(const std::vector<int64_t>& parents, const std::vector<int64_t>& tokens) override;
  bool complete(int64_t row) const override;

 private:
  int64_t beam_;
  ConstraintTracker tracker_;
  std::vector<ConstraintState> rows_;  // one per live row (sentence block * K + hypothesis)
};

}  // namespace nmtzoo
