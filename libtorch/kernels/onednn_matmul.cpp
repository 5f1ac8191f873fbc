// SPDX-License-Identifier: MIT
#include "libtorch/kernels/onednn_matmul.h"

#include <ATen/Parallel.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <c10/util/Exception.h>
#include <oneapi/dnnl/dnnl.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include "libtorch/kernels/kernels.h"

namespace nmtzoo {
namespace {

// How one matrix (rows x cols, given its two strides) is laid out for sgemm: row-major with
// leading dimension ld, or the transpose of a row-major cols x rows matrix.
struct Layout {
  bool transposed;
  int64_t ld;
};

std::optional<Layout> layout_of(const at::Tensor& matrix) {
  const int64_t d = matrix.dim();
  const int64_t rows = matrix.size(d - 2);
  const int64_t cols = matrix.size(d - 1);
  const int64_t row_stride = matrix.stride(d - 2);
  const int64_t col_stride = matrix.stride(d - 1);
  if (col_stride == 1 && (rows == 1 || row_stride >= cols))
    return Layout{false, std::max(row_stride, cols)};
  if (row_stride == 1 && (cols == 1 || col_stride >= rows))
    return Layout{true, std::max(col_stride, rows)};
  return std::nullopt;
}

std::atomic<bool> enabled{true};
std::atomic<bool> installed{false};
std::atomic<int64_t> products{0};
std::atomic<int64_t> product_nanoseconds{0};

// Adds the wall-clock time of one replaced kernel call, whichever path it takes, to the total.
class ProductTimer {
 public:
  ProductTimer() : start_(std::chrono::steady_clock::now()) {}
  ~ProductTimer() {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    product_nanoseconds.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count(),
        std::memory_order_relaxed);
  }
  ProductTimer(const ProductTimer&) = delete;
  ProductTimer& operator=(const ProductTimer&) = delete;

 private:
  std::chrono::steady_clock::time_point start_;
};

bool handled(std::initializer_list<const at::Tensor*> tensors) {
  if (!onednn_products_selected() || !enabled.load(std::memory_order_relaxed)) return false;
  for (const at::Tensor* t : tensors) {
    if (t->scalar_type() != at::kFloat || t->layout() != at::kStrided || !t->device().is_cpu() ||
        t->numel() == 0 || t->is_conj() || t->is_neg()) {
      return false;
    }
  }
  return true;
}

// out (m x n, row-major, ld n) = alpha a b + beta out, for one matrix each.
void multiply_into(const at::Tensor& a, const Layout& la, const at::Tensor& b, const Layout& lb,
                   float alpha, float beta, at::Tensor& out, int64_t a_offset = 0,
                   int64_t b_offset = 0, int64_t out_offset = 0) {
  const int64_t d = a.dim();
  products.fetch_add(1, std::memory_order_relaxed);
  onednn_sgemm(la.transposed, lb.transposed, a.size(d - 2), b.size(d - 1), a.size(d - 1), alpha,
               a.data_ptr<float>() + a_offset, la.ld, b.data_ptr<float>() + b_offset, lb.ld, beta,
               out.data_ptr<float>() + out_offset, out.size(-1));
}

// out (m x n, contiguous) = self broadcast to it. A bias row (linear layers' usual `self`) is
// copied row by row: copy_ from an expanded row took longer than the bias add it replaces
// (37 against 26 ms per transformer_small update, one thread).
void fill_rows(const at::Tensor& self, at::Tensor& out) {
  const int64_t rows = out.size(0), cols = out.size(1);
  const bool one_row = self.dim() == 1 || (self.dim() == 2 && self.size(0) == 1);
  if (!one_row || self.size(-1) != cols || self.stride(-1) != 1) {
    out.copy_(self.expand({rows, cols}));
    return;
  }
  const float* row = self.data_ptr<float>();
  float* data = out.data_ptr<float>();
  at::parallel_for(0, rows, rows_per_task(cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::copy(row, row + cols, data + r * cols);
  });
}

at::Tensor mm_kernel(const at::Tensor& a, const at::Tensor& b) {
  ProductTimer timer;
  if (handled({&a, &b}) && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0)) {
    auto la = layout_of(a);
    auto lb = layout_of(b);
    if (la && lb) {
      at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
      multiply_into(a, *la, b, *lb, 1.0f, 0.0f, out);
      return out;
    }
  }
  return at::cpu::mm(a, b);
}

at::Tensor addmm_kernel(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  ProductTimer timer;
  if (handled({&self, &a, &b}) && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) &&
      self.dim() <= 2 && !beta.isComplex() && !alpha.isComplex()) {
    auto la = layout_of(a);
    auto lb = layout_of(b);
    const std::vector<int64_t> shape{a.size(0), b.size(1)};
    if (la && lb && at::is_expandable_to(self.sizes(), shape)) {
      const float beta_value = beta.toFloat();
      at::Tensor out = at::empty(shape, a.options());
      // With beta 0, BLAS semantics: `self` is not read (NaNs in it do not propagate).
      if (beta_value != 0.0f) fill_rows(self, out);
      multiply_into(a, *la, b, *lb, alpha.toFloat(), beta_value, out);
      return out;
    }
  }
  return at::cpu::addmm(self, a, b, beta, alpha);
}

// In place and into `out`: sgemm's beta accumulates into the destination itself (a weight
// gradient summed over blocks of rows), where the functional addmm writes a new matrix. Only a
// contiguous destination of the product's shape that shares no memory with an operand; anything
// else (resizing, aliasing, strides) is LibTorch's.
bool writable_destination(const at::Tensor& destination, const at::Tensor& a, const at::Tensor& b) {
  return a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) && destination.dim() == 2 &&
         destination.size(0) == a.size(0) && destination.size(1) == b.size(1) &&
         destination.is_contiguous() && !destination.storage().is_alias_of(a.storage()) &&
         !destination.storage().is_alias_of(b.storage());
}

// destination = alpha a b + beta destination through oneDNN, if it takes them.
bool multiply_into_destination(const at::Tensor& a, const at::Tensor& b, float alpha, float beta,
                               at::Tensor& destination) {
  if (!handled({&destination, &a, &b}) || !writable_destination(destination, a, b)) return false;
  auto la = layout_of(a);
  auto lb = layout_of(b);
  if (!la || !lb) return false;
  multiply_into(a, *la, b, *lb, alpha, beta, destination);
  return true;
}

at::Tensor& addmm_inplace_kernel(at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                                 const at::Scalar& beta, const at::Scalar& alpha) {
  ProductTimer timer;
  const bool real = !beta.isComplex() && !alpha.isComplex();
  if (real && multiply_into_destination(a, b, alpha.toFloat(), beta.toFloat(), self)) return self;
  return at::cpu::addmm_(self, a, b, beta, alpha);
}

at::Tensor& mm_out_kernel(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  ProductTimer timer;
  if (multiply_into_destination(a, b, 1.0f, 0.0f, out)) return out;
  return at::cpu::mm_out(out, a, b);
}

at::Tensor bmm_kernel(const at::Tensor& a, const at::Tensor& b) {
  ProductTimer timer;
  if (handled({&a, &b}) && a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) &&
      a.size(2) == b.size(1)) {
    auto la = layout_of(a);
    auto lb = layout_of(b);
    if (la && lb) {
      const int64_t batch = a.size(0);
      at::Tensor out = at::empty({batch, a.size(1), b.size(2)}, a.options());
      const int64_t out_stride = a.size(1) * b.size(2);
      auto run = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          multiply_into(a, *la, b, *lb, 1.0f, 0.0f, out, i * a.stride(0), i * b.stride(0),
                        i * out_stride);
        }
      };
      // Many small matrices (attention): spread over the threads, each product on its thread,
      // at least kFlopsPerTask per task, as a parallel region costs a few microseconds (batch-1
      // decoding's 4 heads of 1 x 64 x t products ran 16% slower split over 2 threads). Few
      // matrices: one after the other, each product threaded by oneDNN.
      constexpr int64_t kFlopsPerTask = int64_t{1} << 16;
      const int64_t flops = std::max<int64_t>(1, 2 * a.size(1) * a.size(2) * b.size(2));
      if (batch >= at::get_num_threads()) {
        at::parallel_for(0, batch, std::max<int64_t>(1, kFlopsPerTask / flops), run);
      } else {
        run(0, batch);
      }
      return out;
    }
  }
  return at::cpu::bmm(a, b);
}

}  // namespace

void onednn_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k,
                                          alpha, a, lda, b, ldb, beta, c, ldc);
  TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed with status ", static_cast<int>(status),
              " for m=", m, " n=", n, " k=", k);
}

void install_onednn_matmul() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Replacing a kernel makes the dispatcher warn once per operator; this is the intended use.
    struct Quiet : c10::WarningHandler {
      void process(const c10::SourceLocation&, const std::string&, bool) override {}
    } quiet;
    c10::Warning::WarningHandlerGuard guard(&quiet);
    // Never destroyed: the registrations must outlive every product of the process.
    static auto* library =
        new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    library->impl("mm", TORCH_FN(mm_kernel));
    library->impl("addmm", TORCH_FN(addmm_kernel));
    library->impl("addmm_", TORCH_FN(addmm_inplace_kernel));
    library->impl("mm.out", TORCH_FN(mm_out_kernel));
    library->impl("bmm", TORCH_FN(bmm_kernel));
    installed = true;
  });
}

bool onednn_matmul_installed() { return installed; }
void set_onednn_matmul_enabled(bool on) { enabled = on; }
bool onednn_matmul_enabled() { return enabled; }
int64_t onednn_matmul_products() { return products.load(); }
double matmul_seconds() { return static_cast<double>(product_nanoseconds.load()) / 1e9; }
void add_matmul_seconds(double seconds) {
  product_nanoseconds.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
}

}  // namespace nmtzoo
