// SPDX-License-Identifier: MIT
// nmtzoo's hand-written CPU kernels, where LibTorch 1.13's own are slow on CPU (see each header
// for the measured reason), behind one switch. With the switch off, or on other devices and
// dtypes, callers get LibTorch's operators instead: same results up to rounding, except that
// dropout masks come from LibTorch's bernoulli_ and differ.
#pragma once

#include <algorithm>
#include <cstdint>

namespace nmtzoo {

// Which kernels run. Starts from the environment's NMTZOO_KERNELS (read once): unset, "on" or any
// other value (with a warning on stderr) selects all; "off" none; "products" only the float32
// products through oneDNN (libtorch/kernels/onednn_matmul.h), which predate the fused kernels: the
// composition the fused kernels' quality is checked against (experiments/measure/seed_band.sh).
// Tests and benchmarks may change it.
enum class KernelSelection { all, products, off };
KernelSelection kernel_selection_from(const char* value);
KernelSelection kernel_selection();
void set_kernel_selection(KernelSelection selection);

// The fused kernels: whether the selection is all; setting it selects all or off.
bool fast_kernels_enabled();
void set_fast_kernels_enabled(bool enabled);
// Whether products go through oneDNN: the selection is all or products.
bool onednn_products_selected();

// Whether the kernels take their AVX-512 paths (libtorch/kernels/avx512.h): the CPU has AVX-512F
// and the build has the paths, and neither NMTZOO_AVX512=off (read once) nor
// set_avx512_enabled(false) turned them off; tests run the portable code on an AVX-512 machine so.
bool avx512_available();
void set_avx512_enabled(bool enabled);

// Flushes denormal floats (below 1.2e-38) to zero, and reads them as zero, on the calling thread
// and on every thread of LibTorch's intra-op pool (PyTorch's torch.set_flush_denormal, which sets
// the calling thread only). Why: a training batch's softmax over the (N, V) logits makes them by
// the million once the model is confident, and this CPU computes on them about 3x slower (the
// softmax of 3,000 x 8,000 wide logits: 28 ms against 10); values below 1e-38 are far below what
// a loss or gradient can resolve. Returns false, changing nothing, when the switch is off or the
// CPU cannot flush. Call it after the thread count is set; threads started later inherit it.
bool set_flush_denormals(bool flush);

// Rows per at::parallel_for task over rows of `row_elements` elements: a parallel region costs a
// few microseconds, so at least ~16k elements per task.
inline int64_t rows_per_task(int64_t row_elements) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, row_elements));
}

}  // namespace nmtzoo
