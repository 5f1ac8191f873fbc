// SPDX-License-Identifier: MIT
#include "libtorch/search/constrained_beam.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {

ConstraintTracker::ConstraintTracker(std::vector<std::vector<std::vector<int64_t>>> constraints,
                                     bool ordered)
    : constraints_(std::move(constraints)), ordered_(ordered) {
  for (const auto& phrases : constraints_) {
    for (const auto& phrase : phrases) {
      TORCH_CHECK(!phrase.empty(), "a constraint must have at least one token");
    }
  }
}

ConstraintState ConstraintTracker::initial(int64_t sentence) const {
  ConstraintState state;
  state.sentence = sentence;
  state.met.assign(constraints_[static_cast<size_t>(sentence)].size(), 0);
  return state;
}

bool ConstraintTracker::may_start(const ConstraintState& state, size_t constraint) const {
  if (state.met[constraint]) return false;
  if (!ordered_) return true;
  // In order: only the first phrase not yet met.
  return std::find(state.met.begin(), state.met.end(), 0) - state.met.begin() ==
         static_cast<std::ptrdiff_t>(constraint);
}

void ConstraintTracker::complete(ConstraintState& state, size_t constraint) const {
  state.met[constraint] = 1;
  state.progress = 0;
  state.under_way.clear();
}

ConstraintState ConstraintTracker::start(ConstraintState state, int64_t token) const {
  const auto& phrases = constraints_[static_cast<size_t>(state.sentence)];
  state.progress = 0;
  state.under_way.clear();
  for (size_t c = 0; c < phrases.size(); ++c) {
    if (may_start(state, c) && phrases[c][0] == token) {
      if (phrases[c].size() == 1) {
        complete(state, c);
        return state;
      }
      state.under_way.push_back(static_cast<int32_t>(c));
    }
  }
  if (!state.under_way.empty()) state.progress = 1;
  return state;
}

ConstraintState ConstraintTracker::advance(const ConstraintState& state, int64_t token) const {
  const auto& phrases = constraints_[static_cast<size_t>(state.sentence)];
  std::vector<int32_t> continuing;
  for (int32_t c : state.under_way) {
    if (phrases[static_cast<size_t>(c)][static_cast<size_t>(state.progress)] == token)
      continuing.push_back(c);
  }
  if (continuing.empty()) return start(state, token);  // the phrase under way is abandoned
  ConstraintState next = state;
  next.progress = state.progress + 1;
  next.under_way = std::move(continuing);
  for (int32_t c : next.under_way) {
    if (static_cast<int64_t>(phrases[static_cast<size_t>(c)].size()) == next.progress) {
      complete(next, static_cast<size_t>(c));
      break;
    }
  }
  return next;
}

std::vector<int64_t> ConstraintTracker::next_tokens(const ConstraintState& state) const {
  const auto& phrases = constraints_[static_cast<size_t>(state.sentence)];
  std::vector<int64_t> tokens;
  for (int32_t c : state.under_way) {
    tokens.push_back(phrases[static_cast<size_t>(c)][static_cast<size_t>(state.progress)]);
  }
  for (size_t c = 0; c < phrases.size(); ++c) {
    if (may_start(state, c)) tokens.push_back(phrases[c][0]);
  }
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

int64_t ConstraintTracker::met_tokens(const ConstraintState& state) const {
  const auto& phrases = constraints_[static_cast<size_t>(state.sentence)];
  int64_t met = state.progress;
  for (size_t c = 0; c < phrases.size(); ++c) {
    if (state.met[c]) met += static_cast<int64_t>(phrases[c].size());
  }
  return met;
}

bool ConstraintTracker::all_met(const ConstraintState& state) const {
  return std::all_of(state.met.begin(), state.met.end(), [](char met) { return met != 0; });
}

ConstrainedBeamStrategy::ConstrainedBeamStrategy(int64_t beam, ConstraintTracker tracker,
                                                 int64_t sentences)
    : beam_(beam), tracker_(std::move(tracker)) {
  TORCH_CHECK(beam >= 1, "the beam must hold at least one hypothesis, but got ", beam);
  for (int64_t s = 0; s < sentences; ++s) {
    for (int64_t k = 0; k < beam; ++k) rows_.push_back(tracker_.initial(s));
  }
}

namespace {

struct Candidate {
  int64_t beam;
  int64_t token;
  double score;
  int64_t bank;
};

}  // namespace

StepCandidates ConstrainedBeamStrategy::step(int64_t, const at::Tensor& log_probs,
                                             const at::Tensor& scores,
                                             const std::vector<int64_t>& sentences) {
  const int64_t N = log_probs.size(0);
  const int64_t K = beam_;
  const int64_t V = log_probs.size(2);
  TORCH_CHECK(static_cast<int64_t>(rows_.size()) == N * K,
              "constrained search lost track of its rows");
  (void)sentences;  // each row's state carries its sentence
  // EOS only for hypotheses that met every constraint, or that can take nothing else.
  std::vector<uint8_t> unmet(static_cast<size_t>(N * K));
  for (size_t r = 0; r < rows_.size(); ++r) unmet[r] = tracker_.all_met(rows_[r]) ? 0 : 1;
  at::Tensor flat = log_probs.reshape({N * K, V}).clone();
  at::Tensor unmet_rows = torch::tensor(std::vector<int64_t>(unmet.begin(), unmet.end()))
                              .to(flat.device())
                              .to(torch::kBool);
  at::Tensor others_open = flat.narrow(1, kEosId + 1, V - kEosId - 1).isfinite().any(1) |
                           flat.narrow(1, 0, kEosId).isfinite().any(1);
  at::Tensor eos = flat.select(1, kEosId);
  eos.masked_fill_(unmet_rows & others_open, kMinusInf);
  at::Tensor total = (scores.reshape({N * K, 1}) + flat).view({N, K * V});

  auto [top_scores, top_indices] = total.topk(std::min(2 * K, K * V), 1);
  auto [best_scores, best_tokens] = total.view({N, K, V}).max(2);
  // Scores of the tokens that advance each row through its constraints.
  std::vector<int64_t> advancing_index;                // flat index into total
  std::vector<std::pair<int64_t, int64_t>> advancing;  // (row, token)
  for (int64_t r = 0; r < N * K; ++r) {
    for (int64_t token : tracker_.next_tokens(rows_[static_cast<size_t>(r)])) {
      advancing.emplace_back(r, token);
      advancing_index.push_back(r * V + token);
    }
  }
  at::Tensor advancing_scores =
      advancing.empty()
          ? torch::empty({0})
          : total.view({-1}).index_select(0, torch::tensor(advancing_index).to(total.device()));
  auto cpu = [](const at::Tensor& t, c10::ScalarType type) {
    return t.to(torch::kCPU, type).contiguous();
  };
  at::Tensor top_s = cpu(top_scores, torch::kDouble), top_i = cpu(top_indices, torch::kLong);
  at::Tensor best_s = cpu(best_scores, torch::kDouble), best_t = cpu(best_tokens, torch::kLong);
  at::Tensor adv_s = cpu(advancing_scores, torch::kDouble);
  auto top_score = top_s.accessor<double, 2>();
  auto top_index = top_i.accessor<int64_t, 2>();
  auto best_score = best_s.accessor<double, 2>();
  auto best_token = best_t.accessor<int64_t, 2>();
  const double* advancing_score = adv_s.data_ptr<double>();

  std::vector<std::vector<Candidate>> per_sentence(static_cast<size_t>(N));
  auto add = [&](int64_t n, int64_t k, int64_t token, double score) {
    if (std::isinf(score)) return;
    auto& list = per_sentence[static_cast<size_t>(n)];
    for (const auto& c : list) {
      if (c.beam == k && c.token == token) return;
    }
    const ConstraintState& state = rows_[static_cast<size_t>(n * K + k)];
    const int64_t bank =
        tracker_.met_tokens(token == kEosId ? state : tracker_.advance(state, token));
    list.push_back({k, token, score, bank});
  };
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t j = 0; j < top_s.size(1); ++j) {
      const int64_t index = top_index[n][j];
      add(n, index / V, index % V, top_score[n][j]);
    }
    for (int64_t k = 0; k < K; ++k) add(n, k, best_token[n][k], best_score[n][k]);
  }
  for (size_t a = 0; a < advancing.size(); ++a) {
    const auto [row, token] = advancing[a];
    add(row / K, row % K, token, advancing_score[a]);
  }

  // Bank allocation: best of the fullest bank, best of the next, ..., then each bank's second...
  size_t width = 1;
  for (auto& list : per_sentence) {
    std::stable_sort(list.begin(), list.end(), [](const Candidate& x, const Candidate& y) {
      return x.bank != y.bank ? x.bank > y.bank : x.score > y.score;
    });
    std::vector<std::pair<int64_t, int64_t>> order;  // (rank within bank, position)
    for (size_t i = 0; i < list.size(); ++i) {
      const int64_t rank = i > 0 && list[i].bank == list[i - 1].bank ? order.back().first + 1 : 0;
      order.emplace_back(rank, static_cast<int64_t>(i));
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<Candidate> allocated;
    for (const auto& [rank, i] : order) allocated.push_back(list[static_cast<size_t>(i)]);
    list = std::move(allocated);
    width = std::max(width, list.size());
  }
  const auto C = static_cast<int64_t>(width);
  at::Tensor out_scores = torch::full({N, C}, kMinusInf, torch::kFloat);
  at::Tensor out_beams = torch::zeros({N, C}, torch::kLong);
  at::Tensor out_tokens = torch::full({N, C}, kEosId, torch::kLong);
  auto s = out_scores.accessor<float, 2>();
  auto b = out_beams.accessor<int64_t, 2>();
  auto t = out_tokens.accessor<int64_t, 2>();
  for (int64_t n = 0; n < N; ++n) {
    const auto& list = per_sentence[static_cast<size_t>(n)];
    for (size_t j = 0; j < list.size(); ++j) {
      s[n][static_cast<int64_t>(j)] = static_cast<float>(list[j].score);
      b[n][static_cast<int64_t>(j)] = list[j].beam;
      t[n][static_cast<int64_t>(j)] = list[j].token;
    }
  }
  const auto device = log_probs.device();
  return {out_scores.to(device), out_beams.to(device), out_tokens.to(device)};
}

bool ConstrainedBeamStrategy::complete(int64_t row) const {
  return tracker_.all_met(rows_[static_cast<size_t>(row)]);
}

void ConstrainedBeamStrategy::select(const std::vector<int64_t>& parents,
                                     const std::vector<int64_t>& tokens) {
  std::vector<ConstraintState> next;
  next.reserve(parents.size());
  for (size_t r = 0; r < parents.size(); ++r) {
    next.push_back(tracker_.advance(rows_[static_cast<size_t>(parents[r])], tokens[r]));
  }
  rows_ = std::move(next);
}

}  // namespace nmtzoo
