// SPDX-License-Identifier: MIT
#include "libtorch/kernels/beam_candidates.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "libtorch/kernels/vector_clones.h"

namespace nmtzoo {
namespace {

constexpr int64_t kBlock = 64;

// topk's order: NaN above everything, then by value.
inline bool ranks_above(float a, float b) { return (std::isnan(a) && !std::isnan(b)) || a > b; }

// Whether any of score + row[0..n) ranks above `threshold` (NaN included).
NMTZOO_VECTOR_CLONES
bool any_above(const float* row, int64_t n, float score, float threshold) {
  int above = 0;
#pragma omp simd reduction(| : above)
  for (int64_t j = 0; j < n; ++j) above |= static_cast<int>(!(score + row[j] <= threshold));
  return above != 0;
}

// The `count` best (value, flat index) so far, best first; an equal value ranks below the ones
// already kept, whose indices are lower.
class BestCandidates {
 public:
  explicit BestCandidates(int64_t count)
      : values_(static_cast<size_t>(count)), indices_(values_.size()) {}

  bool full() const { return size_ == values_.size(); }
  float threshold() const { return values_.back(); }

  void offer(float value, int64_t index) {
    if (full() && !ranks_above(value, values_.back())) return;
    size_t position = std::min(size_, values_.size() - 1);
    while (position > 0 && ranks_above(value, values_[position - 1])) {
      values_[position] = values_[position - 1];
      indices_[position] = indices_[position - 1];
      --position;
    }
    values_[position] = value;
    indices_[position] = index;
    size_ = std::min(size_ + 1, values_.size());
  }

  const std::vector<float>& values() const { return values_; }
  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  std::vector<float> values_;
  std::vector<int64_t> indices_;
  size_t size_ = 0;
};

void scan_row(const float* row, int64_t vocab, float score, int64_t offset, BestCandidates& best) {
  int64_t j = 0;
  for (; j < vocab && !best.full(); ++j) best.offer(score + row[j], offset + j);
  for (; j < vocab; j += kBlock) {
    const int64_t n = std::min(kBlock, vocab - j);
    if (!any_above(row + j, n, score, best.threshold())) continue;
    for (int64_t i = j; i < j + n; ++i) best.offer(score + row[i], offset + i);
  }
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> beam_candidates(const at::Tensor& log_probs,
                                                               const at::Tensor& scores,
                                                               int64_t count) {
  TORCH_CHECK(
      log_probs.dim() == 3 && log_probs.scalar_type() == torch::kFloat &&
          log_probs.is_contiguous() && log_probs.device().is_cpu(),
      "beam_candidates takes (N, K, V) contiguous float32 log-probabilities on the CPU, got ",
      log_probs.sizes(), " ", log_probs.scalar_type(), " on ", log_probs.device());
  const int64_t sentences = log_probs.size(0);
  const int64_t width = log_probs.size(1);
  const int64_t vocab = log_probs.size(2);
  TORCH_CHECK(scores.scalar_type() == torch::kFloat && scores.device().is_cpu() &&
                  scores.sizes() == at::IntArrayRef({sentences, width}),
              "beam_candidates takes (N, K) = (", sentences, ", ", width,
              ") float32 scores on the CPU, got ", scores.sizes(), " ", scores.scalar_type());
  TORCH_CHECK(count >= 1 && count <= width * vocab,
              "beam_candidates: need 1 <= count <= K V = ", width * vocab, ", got ", count);
  RECORD_FUNCTION("nmtzoo::beam_candidates",
                  std::vector<c10::IValue>());  // named in --trace profiles
  const at::Tensor score_values = scores.contiguous();
  at::Tensor values = at::empty({sentences, count}, log_probs.options());
  at::Tensor beams = at::empty({sentences, count}, log_probs.options().dtype(torch::kLong));
  at::Tensor tokens = at::empty_like(beams);
  const float* input = log_probs.data_ptr<float>();
  const float* score = score_values.data_ptr<float>();
  float* value_out = values.data_ptr<float>();
  int64_t* beam_out = beams.data_ptr<int64_t>();
  int64_t* token_out = tokens.data_ptr<int64_t>();
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, width * vocab));
  at::parallel_for(0, sentences, grain, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      BestCandidates best(count);
      for (int64_t k = 0; k < width; ++k) {
        scan_row(input + (n * width + k) * vocab, vocab, score[n * width + k], k * vocab, best);
      }
      for (int64_t c = 0; c < count; ++c) {
        const int64_t flat = best.indices()[static_cast<size_t>(c)];
        value_out[n * count + c] = best.values()[static_cast<size_t>(c)];
        beam_out[n * count + c] = flat / vocab;
        token_out[n * count + c] = flat % vocab;
      }
    }
  });
  return {values, beams, tokens};
}

}  // namespace nmtzoo
