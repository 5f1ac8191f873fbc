// SPDX-License-Identifier: MIT
#include "libtorch/kernels/small_sgemm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "libtorch/kernels/onednn_matmul.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

// A row-major rows x cols matrix inside a buffer of leading dimension ld >= cols, the padding
// filled with a sentinel a product must neither read into its result nor overwrite.
struct Strided {
  int64_t rows, cols, ld;
  std::vector<float> data;
  Strided(int64_t r, int64_t c, int64_t leading, float fill)
      : rows(r), cols(c), ld(leading), data(r * leading, fill) {}
  torch::Tensor matrix() const {
    return torch::from_blob(const_cast<float*>(data.data()), {rows, cols}, {ld, 1}, torch::kFloat)
        .to(torch::kDouble);
  }
};

constexpr float kSentinel = 1e30f;

Strided random_matrix(int64_t rows, int64_t cols, int64_t pad) {
  Strided m(rows, cols, cols + pad, kSentinel);
  torch::Tensor padded = torch::full({rows, cols + pad}, kSentinel);
  padded.narrow(1, 0, cols).normal_();
  std::copy(padded.data_ptr<float>(), padded.data_ptr<float>() + padded.numel(), m.data.begin());
  return m;
}

// Every transposition, alpha, leading dimensions wider than the matrices, sizes around the
// kernel's 16-lane vectors, its 6- and 8-row blocks and its 64-column panels, against the product
// in float64 (tolerance: float32 sums of k terms), with C's padding left as it was.
TEST(SmallSgemm, EqualsTheProductInFloat64ForEveryTranspositionAndSize) {
  torch::manual_seed(3);
  const std::vector<int64_t> sizes{1, 5, 15, 16, 17, 33, 64, 65, 130};
  std::vector<float> scratch;
  int64_t checked = 0;
  for (const int64_t m : sizes) {
    for (const int64_t n : sizes) {
      for (const int64_t k : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{70}}) {
        for (const bool transpose_a : {false, true}) {
          for (const bool transpose_b : {false, true}) {
            SCOPED_TRACE(::testing::Message()
                         << "m " << m << " n " << n << " k " << k << " transpose a " << transpose_a
                         << " b " << transpose_b);
            const int64_t pad = (m + n + k) % 3;
            const Strided a = transpose_a ? random_matrix(k, m, pad) : random_matrix(m, k, pad);
            const Strided b =
                transpose_b ? random_matrix(n, k, pad + 1) : random_matrix(k, n, pad + 1);
            Strided c(m, n, n + 2, kSentinel);
            const float alpha = 0.125f * static_cast<float>(1 + (m + k) % 5);
            small_sgemm(transpose_a, transpose_b, m, n, k, alpha, a.data.data(), a.ld,
                        b.data.data(), b.ld, c.data.data(), c.ld, scratch);
            const torch::Tensor op_a = transpose_a ? a.matrix().t() : a.matrix();
            const torch::Tensor op_b = transpose_b ? b.matrix().t() : b.matrix();
            const torch::Tensor expected = alpha * op_a.mm(op_b);
            const double tolerance =
                1e-6 * static_cast<double>(k) * (1 + expected.abs().max().item<double>());
            ASSERT_LE((c.matrix() - expected).abs().max().item<double>(), tolerance);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = n; j < c.ld; ++j)
                ASSERT_EQ(c.data[i * c.ld + j], kSentinel) << "row " << i;
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 9 * 9 * 4 * 4);
}

// C is overwritten (beta 0) whatever it held, NaN included; k = 0 gives zeros.
TEST(SmallSgemm, OverwritesTheOutputAndGivesZerosForAnEmptySum) {
  std::vector<float> scratch;
  const std::vector<float> a(6 * 4, 1.0f), b(4 * 20, 2.0f);
  std::vector<float> c(6 * 20, std::numeric_limits<float>::quiet_NaN());
  small_sgemm(false, false, 6, 20, 4, 0.5f, a.data(), 4, b.data(), 20, c.data(), 20, scratch);
  for (const float value : c) ASSERT_EQ(value, 4.0f);
  small_sgemm(false, false, 6, 20, 0, 0.5f, a.data(), 4, b.data(), 20, c.data(), 20, scratch);
  for (const float value : c) ASSERT_EQ(value, 0.0f);
}

// The attention's shapes, where both kernels compute the same float32 sums in possibly another
// order: small_sgemm against oneDNN's sgemm.
TEST(SmallSgemm, AgreesWithOneDnnOnTheAttentionsShapes) {
  torch::manual_seed(5);
  std::vector<float> scratch;
  const int64_t t = 15, s = 21, d = 64, width = 3 * 256;
  const Strided q = random_matrix(t, d, width - d), k = random_matrix(s, d, width - d);
  std::vector<float> ours(t * s), theirs(t * s);
  small_sgemm(false, true, t, s, d, 0.125f, q.data.data(), q.ld, k.data.data(), k.ld, ours.data(),
              s, scratch);
  onednn_sgemm(false, true, t, s, d, 0.125f, q.data.data(), q.ld, k.data.data(), k.ld, 0.0f,
               theirs.data(), s);
  for (size_t i = 0; i < ours.size(); ++i)
    ASSERT_NEAR(ours[i], theirs[i], 1e-5f * (1 + std::abs(theirs[i])));
}

// transpose() copies every element to its place (bit for bit) for sizes around its 16 x 16
// tiles, from a source with a leading dimension wider than its columns.
TEST(SmallSgemm, TransposeCopiesEveryElement) {
  torch::manual_seed(7);
  for (const int64_t rows : {1, 15, 16, 17, 40}) {
    for (const int64_t cols : {1, 3, 16, 33}) {
      const torch::Tensor source = torch::randn({rows, cols + 5});
      std::vector<float> out(static_cast<size_t>(rows * cols), kSentinel);
      transpose(source.data_ptr<float>(), cols + 5, rows, cols, out.data());
      const torch::Tensor expected = source.narrow(1, 0, cols).t().contiguous();
      ASSERT_TRUE(torch::from_blob(out.data(), {cols, rows}).equal(expected))
          << rows << " x " << cols;
    }
  }
}

// contiguous_transpose equals t().contiguous() on the tiles' path and on LibTorch's (another
// dtype, a non-contiguous matrix, the kernels off).
TEST(SmallSgemm, ContiguousTransposeEqualsLibTorchsOnEveryPath) {
  torch::manual_seed(8);
  const torch::Tensor matrix = torch::randn({37, 70});
  for (const bool kernels : {true, false}) {
    testing::KernelSwitch fast(kernels);
    for (const torch::Tensor& m :
         {matrix, matrix.to(torch::kDouble), matrix.t(), matrix.narrow(1, 1, 60)}) {
      const torch::Tensor out = contiguous_transpose(m);
      EXPECT_TRUE(out.is_contiguous());
      EXPECT_TRUE(out.equal(m.t()))
          << "kernels " << kernels << ", " << m.sizes() << " " << m.strides();
    }
  }
}

}  // namespace
}  // namespace nmtzoo
