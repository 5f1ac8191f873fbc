// SPDX-License-Identifier: MIT
// int8 inference for linear layers, as CTranslate2's int8 and PyTorch's quantize_dynamic do it:
// each weight quantized once per output row (symmetric, scale max|w| / 127), the activations
// quantized per call (asymmetric uint8, scale and zero point from their range), products
// accumulated in int32 and returned in float32, bias added in float32.
//
// On oneDNN directly (Debian's libdnnl, the same library LibTorch links): one matmul primitive per
// weight, created once with the row count, activation scale and zero point given at run time,
// and the weight reordered once into the primitive's own layout. LibTorch 1.13's
// quantized::linear_dynamic on the same oneDNN bakes each call's activation scale into a new
// primitive, so every call compiled a kernel: measured here, it made beam-5 decoding 0.71x and
// batch-1 greedy decoding 0.15x float32's speed.
//
// A scope like autocast rather than a converted model: the float weights stay where they are,
// training and checkpoints never see int8, and one model can serve float32 and int8 requests.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace nmtzoo {

// The int8 weights of the linear layers a model has run through it.
class Int8Linears {
 public:
  Int8Linears();
  ~Int8Linears();
  Int8Linears(const Int8Linears&) = delete;
  Int8Linears& operator=(const Int8Linears&) = delete;

  // Throws std::runtime_error saying why when int8 products cannot run on this machine.
  static void require_support();

  // x W^T + b, W (N, K) and b (N) float, x (..., K) float on CPU. W is quantized and packed the
  // first time it is seen, keyed by its memory and shape, and must not change in place while this
  // object is in use (a model's weights during decoding). The entry holds W's memory, so no other
  // tensor can take its address; once nothing else holds W (a shortlist's gathered rows after
  // their batch), the entry is dropped at the next packing.
  at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

  int64_t packed_weights() const;  // how many weights have been packed
  int64_t int8_bytes() const;      // their int8 values, scales and biases, in bytes
  double pack_seconds() const;     // spent quantizing and packing them

 private:
  struct Packed;
  const Packed& packed(const at::Tensor& weight, const at::Tensor& bias);

  mutable std::mutex mutex_;
  // (weight memory, rows, columns, bias memory) -> packed form.
  using Key = std::tuple<const void*, int64_t, int64_t, const void*>;
  std::map<Key, std::unique_ptr<Packed>> packed_;
  double pack_seconds_ = 0;
};

// While alive, the zoo's linear layers on this thread (libtorch/models/functional.h apply_linear())
// run in int8 through `linears`, when grad mode is off; null `linears` leaves them as they are.
// Nests.
class Int8Scope {
 public:
  explicit Int8Scope(Int8Linears* linears);
  ~Int8Scope();
  Int8Scope(const Int8Scope&) = delete;
  Int8Scope& operator=(const Int8Scope&) = delete;

 private:
  Int8Linears* previous_;
};

// The Int8Linears of the innermost Int8Scope on this thread, or null.
Int8Linears* active_int8_linears();

}  // namespace nmtzoo
