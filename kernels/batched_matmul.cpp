#include "kernels/batched_matmul.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/torch.h>

#include "kernels/kernels.h"

namespace nmtzoo {
namespace {

// Fortran BLAS sgemm, as exported by the libblas.so.3 LibTorch loads (OpenBLAS here).
using Sgemm = void (*)(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c, const int* ldc);

Sgemm blas_sgemm() {
  static const Sgemm sgemm = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "sgemm_"));
  return sgemm;
}

// Row-major C = op(A) op(B) for each matrix of the batch, as column-major C^T = op(B)^T op(A)^T.
at::Tensor gemm_batch(const at::Tensor& a_in, const at::Tensor& b_in, bool transpose_a,
                      bool transpose_b) {
  at::Tensor a = a_in.contiguous();
  at::Tensor b = b_in.contiguous();
  const int64_t batch = a.size(0);
  const int m = static_cast<int>(transpose_a ? a.size(2) : a.size(1));
  const int k = static_cast<int>(transpose_a ? a.size(1) : a.size(2));
  const int n = static_cast<int>(transpose_b ? b.size(1) : b.size(2));
  TORCH_CHECK((transpose_b ? b.size(2) : b.size(1)) == k, "batched_matmul: inner sizes differ: ",
              a.sizes(), " and ", b.sizes());
  at::Tensor c = torch::empty({batch, m, n}, a.options());
  const float* a_data = a.data_ptr<float>();
  const float* b_data = b.data_ptr<float>();
  float* c_data = c.data_ptr<float>();
  const int lda = transpose_a ? m : k;
  const int ldb = transpose_b ? k : n;
  const char op_a = transpose_a ? 'T' : 'N';
  const char op_b = transpose_b ? 'T' : 'N';
  const float one = 1.0f;
  const float zero = 0.0f;
  const int64_t a_stride = static_cast<int64_t>(m) * k;
  const int64_t b_stride = static_cast<int64_t>(k) * n;
  const int64_t c_stride = static_cast<int64_t>(m) * n;
  Sgemm sgemm = blas_sgemm();
  // Inside the parallel region OpenBLAS (OpenMP build) runs each call on the calling thread.
  at::parallel_for(0, batch, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      sgemm(&op_b, &op_a, &n, &m, &k, &one, b_data + i * b_stride, &ldb, a_data + i * a_stride,
            &lda, &zero, c_data + i * c_stride, &n);
    }
  });
  return c;
}

class BatchedMatmul : public torch::autograd::Function<BatchedMatmul> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a,
                            const at::Tensor& b, bool transpose_a, bool transpose_b) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["transpose_a"] = transpose_a;
    ctx->saved_data["transpose_b"] = transpose_b;
    return gemm_batch(a, b, transpose_a, transpose_b);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& a = saved[0];
    const at::Tensor& b = saved[1];
    const at::Tensor& g = grads[0];
    const bool ta = ctx->saved_data["transpose_a"].toBool();
    const bool tb = ctx->saved_data["transpose_b"].toBool();
    at::Tensor grad_a, grad_b;
    if (!ta && !tb) {         // C = A B
      grad_a = gemm_batch(g, b, false, true);
      grad_b = gemm_batch(a, g, true, false);
    } else if (!ta && tb) {   // C = A B^T
      grad_a = gemm_batch(g, b, false, false);
      grad_b = gemm_batch(g, a, true, false);
    } else {                  // C = A^T B
      grad_a = gemm_batch(b, g, false, true);
      grad_b = gemm_batch(a, g, false, false);
    }
    return {grad_a, grad_b, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool batched_matmul_uses_blas() { return blas_sgemm() != nullptr; }

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, bool transpose_a,
                          bool transpose_b) {
  TORCH_CHECK(a.dim() >= 3 && a.dim() == b.dim(), "batched_matmul needs two tensors of the same "
              "rank >= 3, but got ", a.sizes(), " and ", b.sizes());
  TORCH_CHECK(!(transpose_a && transpose_b), "batched_matmul: transpose one operand at most");
  const bool fast = fast_kernels_enabled() && a.device().is_cpu() && a.scalar_type() == at::kFloat &&
                    b.scalar_type() == at::kFloat && batched_matmul_uses_blas() &&
                    a.sizes().slice(0, a.dim() - 2) == b.sizes().slice(0, b.dim() - 2);
  if (!fast) {
    return torch::matmul(transpose_a ? a.transpose(-2, -1) : a, transpose_b ? b.transpose(-2, -1) : b);
  }
  auto batch_shape = a.sizes().slice(0, a.dim() - 2).vec();
  at::Tensor a3 = a.reshape({-1, a.size(-2), a.size(-1)});
  at::Tensor b3 = b.reshape({-1, b.size(-2), b.size(-1)});
  at::Tensor c = BatchedMatmul::apply(a3, b3, transpose_a, transpose_b);
  batch_shape.push_back(c.size(1));
  batch_shape.push_back(c.size(2));
  return c.view(batch_shape);
}

}  // namespace nmtzoo
