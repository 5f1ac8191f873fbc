// SPDX-License-Identifier: MIT
#include "libtorch/kernels/int8_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace nmtzoo {
namespace {

using dnnl::memory;
using Dims = memory::dims;

thread_local Int8Linears* active = nullptr;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// round(x / scale) + zero_point, clamped to [0, 255]. By hand because LibTorch 1.13 without
// FBGEMM quantizes with a scalar loop: at::quantize_per_tensor took more time than the int8
// matmuls themselves in beam search. This loop vectorizes and runs on LibTorch's threads.
__attribute__((optimize("O3"))) at::Tensor quantize_to_uint8(const at::Tensor& x, float scale,
                                                             int32_t zero_point) {
  at::Tensor out = at::empty(x.sizes(), x.options().dtype(at::kByte));
  const float* in = x.data_ptr<float>();
  uint8_t* q = out.data_ptr<uint8_t>();
  const float inverse = 1.0f / scale;
  const auto zero = static_cast<float>(zero_point);
  at::parallel_for(0, x.numel(), 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = std::min(std::max(in[i] * inverse + zero, 0.0f), 255.0f);
      q[i] = static_cast<uint8_t>(v + 0.5f);  // v >= 0: rounds half up
    }
  });
  return out;
}

}  // namespace

struct Int8Linears::Packed {
  int64_t rows = 0;     // N
  int64_t columns = 0;  // K
  dnnl::matmul matmul;
  memory weights;     // int8, in the primitive's layout
  at::Tensor scales;  // (N) float: row r of W is about int8 row r * scales[r]
  at::Tensor bias;    // (1, N) float, or undefined
  // The float weight's and bias's memory, held so that no other tensor can be allocated at the
  // addresses that key this entry while it exists.
  c10::Storage weight_storage;
  c10::Storage bias_storage;

  // Nothing but this entry holds the float weight or bias any more (a shortlist's gathered rows
  // after its batch, a model destroyed): the entry can never be looked up again.
  bool orphaned() const {
    return weight_storage.use_count() == 1 || (bias_storage && bias_storage.use_count() == 1);
  }
};

Int8Linears::Int8Linears() = default;
Int8Linears::~Int8Linears() = default;

void Int8Linears::require_support() {
  // Probed once per process: every decoding call builds a TranslationPipeline, which checks it.
  static const std::string problem = [] {
    try {
      Int8Linears probe;
      probe.linear(at::ones({2, 4}), at::ones({3, 4}), at::zeros({3}));
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  if (!problem.empty()) {
    throw std::runtime_error(fmt::format(
        "int8 decoding cannot run here (oneDNN: {}); use decoding.dtype float32 or bf16", problem));
  }
}

const Int8Linears::Packed& Int8Linears::packed(const at::Tensor& weight, const at::Tensor& bias) {
  const Key key{weight.data_ptr(), weight.size(0), weight.size(1),
                bias.defined() ? bias.data_ptr() : nullptr};
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = packed_.find(key); it != packed_.end()) return *it->second;
  TORCH_CHECK(weight.dim() == 2 && weight.device().is_cpu(),
              "int8 linear layers need a 2-D CPU weight, got ", weight.sizes(), " on ",
              weight.device());
  const auto start = std::chrono::steady_clock::now();
  for (auto it = packed_.begin(); it != packed_.end();)
    it = it->second->orphaned() ? packed_.erase(it) : std::next(it);
  auto entry = std::make_unique<Packed>();
  entry->weight_storage = weight.storage();
  if (bias.defined()) entry->bias_storage = bias.storage();
  at::Tensor w = weight.detach().to(at::kFloat).contiguous();
  entry->rows = w.size(0);
  entry->columns = w.size(1);
  entry->scales = (w.abs().amax(1) / 127.0).clamp_min(1e-12);
  at::Tensor int8 =
      (w / entry->scales.unsqueeze(1)).round_().clamp_(-127, 127).to(at::kChar).contiguous();
  const memory::dim n = entry->rows, k = entry->columns;

  // src (M, K) uint8 with M, zero point and the output scales (activation scale x row scales)
  // given at run time; W^T (K, N) int8 in whatever layout oneDNN prefers; dst (M, N) float.
  memory::desc src_md({DNNL_RUNTIME_DIM_VAL, k}, memory::data_type::u8, memory::format_tag::ab);
  memory::desc weights_md({k, n}, memory::data_type::s8, memory::format_tag::any);
  memory::desc dst_md({DNNL_RUNTIME_DIM_VAL, n}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_output_scales(/*mask=*/1 << 1, {DNNL_RUNTIME_F32_VAL});
  attr.set_zero_points(DNNL_ARG_SRC, /*mask=*/0, {DNNL_RUNTIME_S32_VAL});
  if (bias.defined()) {
    // After the scales, in float: a binary post-op rather than the matmul's own int8 bias.
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add,
                      memory::desc({1, n}, memory::data_type::f32, memory::format_tag::ab));
    attr.set_post_ops(ops);
    entry->bias = bias.detach().to(at::kFloat).reshape({1, n}).contiguous();
  }
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, dst_md), attr,
                                  cpu_engine());
  entry->matmul = dnnl::matmul(pd);
  memory plain({{k, n}, memory::data_type::s8, memory::format_tag::ba}, cpu_engine(),
               int8.data_ptr());
  entry->weights = memory(pd.weights_desc(), cpu_engine());
  dnnl::reorder(plain, entry->weights).execute(thread_stream(), plain, entry->weights);
  thread_stream().wait();

  pack_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return *packed_.emplace(key, std::move(entry)).first->second;
}

at::Tensor Int8Linears::linear(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias) {
  const Packed& p = packed(weight, bias);
  TORCH_CHECK(x.size(-1) == p.columns, "int8 linear: input has ", x.size(-1),
              " features, the weight ", p.columns);
  at::Tensor input = x.to(at::kFloat).reshape({-1, p.columns}).contiguous();
  const memory::dim m = input.size(0);
  auto out_shape = x.sizes().vec();
  out_shape.back() = p.rows;
  at::Tensor output = at::empty({m, p.rows}, input.options());
  if (m == 0) return output.view(out_shape);

  // The activations' range, zero included so that 0 stays exact.
  auto [lowest, highest] = at::aminmax(input);
  const float low = std::min(lowest.item<float>(), 0.0f);
  const float high = std::max(highest.item<float>(), 0.0f);
  const float scale = high > low ? (high - low) / 255.0f : 1.0f;
  const auto zero_point = static_cast<int32_t>(std::lround(-low / scale));
  at::Tensor quantized = quantize_to_uint8(input, scale, zero_point);
  at::Tensor output_scales = (p.scales * scale).contiguous();

  dnnl::engine& engine = cpu_engine();
  memory src({{m, p.columns}, memory::data_type::u8, memory::format_tag::ab}, engine,
             quantized.data_ptr());
  memory dst({{m, p.rows}, memory::data_type::f32, memory::format_tag::ab}, engine,
             output.data_ptr());
  memory scales({{p.rows}, memory::data_type::f32, memory::format_tag::a}, engine,
                output_scales.data_ptr());
  int32_t zero = zero_point;
  memory zero_memory({{1}, memory::data_type::s32, memory::format_tag::a}, engine, &zero);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, p.weights},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_ATTR_OUTPUT_SCALES, scales},
                                       {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_memory}};
  if (p.bias.defined()) {
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                 memory({{1, p.rows}, memory::data_type::f32, memory::format_tag::ab}, engine,
                        p.bias.data_ptr()));
  }
  p.matmul.execute(thread_stream(), args);
  thread_stream().wait();
  return output.view(out_shape);
}

int64_t Int8Linears::packed_weights() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(packed_.size());
}

int64_t Int8Linears::int8_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t bytes = 0;
  for (const auto& [key, p] : packed_) {
    bytes += static_cast<int64_t>(p->weights.get_desc().get_size()) +
             4 * p->rows * (p->bias.defined() ? 2 : 1);
  }
  return bytes;
}

double Int8Linears::pack_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pack_seconds_;
}

Int8Scope::Int8Scope(Int8Linears* linears) : previous_(active) {
  if (linears != nullptr) active = linears;
}

Int8Scope::~Int8Scope() { active = previous_; }

Int8Linears* active_int8_linears() { return active; }

}  // namespace nmtzoo
