// SPDX-License-Identifier: MIT
// A 2-D bool mask (true = forbidden) as the kernels read it: its data and element strides.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmtzoo {

struct MaskView {
  const bool* data = nullptr;  // null: nothing masked
  int64_t row = 0, column = 0;

  static MaskView of(const at::Tensor& mask) {
    if (!mask.defined()) return {};
    return {mask.data_ptr<bool>(), mask.stride(0), mask.stride(1)};
  }
  // Row r's first entry, its entries `column` apart; null when nothing is masked.
  const bool* row_of(int64_t r) const { return data != nullptr ? data + r * row : nullptr; }
  bool forbids(int64_t r, int64_t c) const { return data != nullptr && data[r * row + c * column]; }
};

}  // namespace nmtzoo
