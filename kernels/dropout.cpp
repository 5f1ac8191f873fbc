#include "kernels/dropout.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <limits>

namespace nmtzoo {
namespace {

constexpr int64_t kChunk = 4096;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class ChunkedDropout : public torch::autograd::Function<ChunkedDropout> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, double p) {
    // random_ over the full int64 range is one random64() of the default generator, drawn
    // under its lock: the public spelling of what the masks were always seeded with.
    const auto seed = static_cast<uint64_t>(
        torch::empty({}, torch::kLong)
            .random_(std::numeric_limits<int64_t>::lowest(), c10::optional<int64_t>())
            .item<int64_t>());
    at::Tensor x = input.contiguous();
    at::Tensor mask = torch::empty(x.sizes(), x.options().dtype(torch::kUInt8));
    at::Tensor output = torch::empty_like(x);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    // keep when the top 24 random bits fall below (1 - p) * 2^24
    const auto threshold = static_cast<uint32_t>((1.0 - p) * 16777216.0);
    const float* in = x.data_ptr<float>();
    uint8_t* keep = mask.data_ptr<uint8_t>();
    float* out = output.data_ptr<float>();
    const int64_t n = x.numel();
    at::parallel_for(0, (n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
      for (int64_t chunk = first; chunk < last; ++chunk) {
        uint64_t state = seed ^ (static_cast<uint64_t>(chunk) * 0xd1b54a32d192ed03ULL);
        const int64_t end = std::min(n, (chunk + 1) * kChunk);
        for (int64_t i = chunk * kChunk; i < end; i += 2) {
          uint64_t bits = splitmix64(state);
          for (int64_t j = i; j < std::min(end, i + 2); ++j, bits >>= 32) {
            const bool kept = (static_cast<uint32_t>(bits) >> 8) < threshold;
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
