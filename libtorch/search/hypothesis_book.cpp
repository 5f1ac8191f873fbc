// SPDX-License-Identifier: MIT
#include "libtorch/search/hypothesis_book.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "torch_free/tokenizer/special_tokens.h"

namespace nmtzoo {
namespace {

// GNMT's coverage penalty of one hypothesis: beta * sum over source positions of
// log(min(total attention received, 1)). attention (T, S) may hold padding columns past
// `source_length`.
double coverage_penalty(const at::Tensor& attention, int64_t source_length, double beta) {
  at::Tensor received = attention.narrow(1, 0, source_length).sum(0).to(torch::kDouble);
  return beta * received.clamp(1e-10, 1.0).log().sum().item<double>();
}

}  // namespace

HypothesisBook::HypothesisBook(int64_t batch, int64_t width, const SearchOptions& options,
                               std::vector<int64_t> source_lengths)
    : width_(width),
      options_(options),
      source_lengths_(std::move(source_lengths)),
      finished_(static_cast<size_t>(batch)),
      alive_(static_cast<size_t>(batch)),
      row_tokens_(static_cast<size_t>(batch * width)) {
  std::iota(alive_.begin(), alive_.end(), 0);
}

NextRows HypothesisBook::advance(const StepCandidates& candidates, const SearchStrategy& strategy,
                                 const at::Tensor& history) {
  at::Tensor cpu_values = candidates.scores.to(torch::kCPU, torch::kDouble);
  at::Tensor cpu_beams = candidates.beams.to(torch::kCPU);
  at::Tensor cpu_tokens = candidates.tokens.to(torch::kCPU);
  auto value = cpu_values.accessor<double, 2>();
  auto beam = cpu_beams.accessor<int64_t, 2>();
  auto candidate_token = cpu_tokens.accessor<int64_t, 2>();
  const int64_t K = width_;
  NextRows next;
  for (int64_t b = 0; b < static_cast<int64_t>(alive_.size()); ++b) {
    for (int64_t j = 0; j < cpu_values.size(1); ++j) {
      if (std::isnan(value[b][j]) || value[b][j] == std::numeric_limits<double>::infinity()) {
        next.non_finite.push_back(alive_[b]);
        break;
      }
    }
  }
  if (!next.non_finite.empty()) return next;
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
        if (j < K && static_cast<int64_t>(done.size()) < K) {
          done.push_back(finish(parent, alive_[b], value[b][j], history));
          done.back().complete = strategy.complete(parent);
        }
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

std::vector<std::vector<Hypothesis>> HypothesisBook::results(int64_t nbest) {
  for (auto& done : finished_) {
    std::stable_sort(done.begin(), done.end(), [](const Hypothesis& x, const Hypothesis& y) {
      return x.complete != y.complete ? x.complete : x.score > y.score;
    });
    done.resize(std::min<size_t>(done.size(), static_cast<size_t>(nbest)));
  }
  return std::move(finished_);
}

Hypothesis HypothesisBook::finish(int64_t row, int64_t sentence, double log_prob,
                                  const at::Tensor& history) const {
  Hypothesis hypothesis;
  hypothesis.tokens = row_tokens_[row];
  hypothesis.log_prob = log_prob;
  hypothesis.score = penalized_score(log_prob, static_cast<int64_t>(hypothesis.tokens.size()) + 1,
                                     options_.length_penalty, options_.alpha);
  if (history.defined()) {
    hypothesis.attention = history[row].to(torch::kCPU);
    if (options_.coverage_penalty > 0) {
      hypothesis.score +=
          coverage_penalty(hypothesis.attention, source_lengths_[static_cast<size_t>(sentence)],
                           options_.coverage_penalty);
    }
  }
  return hypothesis;
}

}  // namespace nmtzoo
