// SPDX-License-Identifier: MIT
#include "libtorch/kernels/dropout.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>

#include "libtorch/kernels/counter_rng.h"

namespace nmtzoo {
namespace {

constexpr int64_t kDropoutChunk = counter_rng::kStreamElements;

class ChunkedDropout : public torch::autograd::Function<ChunkedDropout> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                            double p) {
    const uint64_t seed = counter_rng::draw_seed();
    at::Tensor x = input.contiguous();
    at::Tensor mask = torch::empty(x.sizes(), x.options().dtype(torch::kUInt8));
    at::Tensor output = torch::empty_like(x);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    const uint32_t threshold = counter_rng::keep_threshold(p);
    const float* in = x.data_ptr<float>();
    uint8_t* keep = mask.data_ptr<uint8_t>();
    float* out = output.data_ptr<float>();
    const int64_t n = x.numel();
    at::parallel_for(
        0, (n + kDropoutChunk - 1) / kDropoutChunk, 1, [&](int64_t first, int64_t last) {
          for (int64_t chunk = first; chunk < last; ++chunk) {
            uint64_t state = counter_rng::stream(seed, chunk);
            const int64_t end = std::min(n, (chunk + 1) * kDropoutChunk);
            for (int64_t i = chunk * kDropoutChunk; i < end; i += 2) {
              uint64_t bits = counter_rng::next(state);
              for (int64_t j = i; j < std::min(end, i + 2); ++j, bits >>= 32) {
                const bool kept = counter_rng::kept(static_cast<uint32_t>(bits), threshold);
                keep[j] = kept;
                out[j] = kept ? in[j] * scale : 0.0f;
              }
            }
          }
        });
    ctx->save_for_backward({mask});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    at::Tensor mask = ctx->get_saved_variables()[0];
    return {grads[0] * mask * ctx->saved_data["scale"].toDouble(), at::Tensor()};
  }
};

}  // namespace

bool chunked_dropout_applies(const at::Tensor& x, double p) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && p > 0 && p < 1;
}

at::Tensor chunked_dropout(const at::Tensor& x, double p) { return ChunkedDropout::apply(x, p); }

}  // namespace nmtzoo
