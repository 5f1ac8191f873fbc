// SPDX-License-Identifier: MIT
#include "libtorch/kernels/onednn_matmul.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>

#include <cstdlib>
#include <limits>
#include <utility>

#include "libtorch/kernels/kernels.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

// Runs `product` and says how many matrices went through oneDNN meanwhile.
template <typename F>
int64_t products_during(F product) {
  const int64_t before = onednn_matmul_products();
  product();
  return onednn_matmul_products() - before;
}

// Row-major, transposed, and row-major with a leading dimension wider than the matrix.
std::vector<at::Tensor> layouts_of(int64_t rows, int64_t cols) {
  return {torch::randn({rows, cols}), torch::randn({cols, rows}).t(),
          torch::randn({rows, cols + 3}).narrow(1, 2, cols),
          torch::randn({cols + 2, rows}).narrow(0, 1, cols).t()};
}

TEST(KernelSelection, ReadsTheEnvironmentsValue) {
  EXPECT_EQ(kernel_selection_from(nullptr), KernelSelection::all);
  EXPECT_EQ(kernel_selection_from("on"), KernelSelection::all);
  EXPECT_EQ(kernel_selection_from("off"), KernelSelection::off);
  EXPECT_EQ(kernel_selection_from("products"), KernelSelection::products);
  EXPECT_EQ(kernel_selection_from("of"),
            KernelSelection::all);  // with a warning, from the environment
  const KernelSelection before = kernel_selection();
  {
    testing::KernelSwitch off(false);
    EXPECT_EQ(kernel_selection(), KernelSelection::off);
  }
  EXPECT_EQ(kernel_selection(), before);
}

// Run by ctest as it is and with NMTZOO_KERNELS=products and =off (tests/CMakeLists.txt).
TEST(OnednnMatmul, TheEnvironmentSelectsWhereProductsGo) {
  const KernelSelection selection = kernel_selection_from(std::getenv("NMTZOO_KERNELS"));
  EXPECT_EQ(kernel_selection(), selection);
  EXPECT_EQ(fast_kernels_enabled(), selection == KernelSelection::all);
  EXPECT_EQ(onednn_products_selected(), selection != KernelSelection::off);
  auto a = torch::randn({7, 5});
  auto b = torch::randn({5, 6});
  at::Tensor product;
  const int64_t expected = selection == KernelSelection::off ? 0 : 1;
  EXPECT_EQ(products_during([&] { product = torch::mm(a, b); }), expected);
  EXPECT_TRUE(torch::allclose(product, at::cpu::mm(a, b), 1e-5, 1e-5));
}

TEST(OnednnMatmul, MmAndAddmmMatchLibTorchsKernelsForEveryLayout) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  ASSERT_TRUE(onednn_matmul_installed());
  torch::manual_seed(3);
  for (const auto& a : layouts_of(7, 5)) {
    for (const auto& b : layouts_of(5, 6)) {
      at::Tensor ours;
      EXPECT_EQ(products_during([&] { ours = torch::mm(a, b); }), 1);
      EXPECT_TRUE(torch::allclose(ours, at::cpu::mm(a, b), 1e-5, 1e-5));
      for (const auto& bias : {torch::randn({6}), torch::randn({1, 6}), torch::randn({7, 1}),
                               torch::randn({7, 6}), torch::randn({12}).slice(0, 0, 12, 2)}) {
        EXPECT_EQ(products_during([&] { ours = torch::addmm(bias, a, b, 0.5, 2.0); }), 1);
        EXPECT_TRUE(torch::allclose(ours, at::cpu::addmm(bias, a, b, 0.5, 2.0), 1e-5, 1e-5));
      }
    }
  }
}

TEST(OnednnMatmul, InPlaceAddmmAndMmOutWriteTheirDestinationForEveryLayout) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  torch::manual_seed(5);
  for (const auto& a : layouts_of(7, 5)) {
    for (const auto& b : layouts_of(5, 6)) {
      // A row block of a larger matrix, as a weight gradient summed block by block.
      auto whole = torch::randn({9, 6});
      auto destination = whole.narrow(0, 1, 7);
      const auto expected = at::cpu::addmm(destination, a, b, 0.5, 2.0);
      const auto rows_outside = torch::cat({whole.narrow(0, 0, 1), whole.narrow(0, 8, 1)});
      EXPECT_EQ(products_during([&] { destination.addmm_(a, b, 0.5, 2.0); }), 1);
      EXPECT_TRUE(torch::allclose(destination, expected, 1e-5, 1e-5));
      EXPECT_TRUE(
          torch::equal(torch::cat({whole.narrow(0, 0, 1), whole.narrow(0, 8, 1)}), rows_outside));
      auto out = torch::full({7, 6}, std::numeric_limits<float>::quiet_NaN());
      EXPECT_EQ(products_during([&] { torch::mm_out(out, a, b); }), 1);
      EXPECT_TRUE(torch::allclose(out, at::cpu::mm(a, b), 1e-5, 1e-5));
    }
  }
}

TEST(OnednnMatmul, InPlaceAndOutProductsLeaveResizingAliasingAndStridesToLibTorch) {
  testing::KernelSwitch on(true);
  torch::manual_seed(6);
  auto a = torch::randn({4, 4});
  auto b = torch::randn({4, 4});
  auto aliased = a.clone();
  const auto expected = at::cpu::addmm(aliased, aliased, b);
  EXPECT_EQ(products_during([&] { aliased.addmm_(aliased, b); }), 0);  // self is an operand
  EXPECT_TRUE(torch::allclose(aliased, expected, 1e-5, 1e-5));
  auto strided = torch::zeros({4, 8}).narrow(1, 0, 4);
  EXPECT_EQ(products_during([&] { strided.addmm_(a, b); }), 0);
  EXPECT_TRUE(torch::allclose(strided, at::cpu::mm(a, b), 1e-5, 1e-5));
  auto empty_out = torch::empty({0});
  EXPECT_EQ(products_during([&] { torch::mm_out(empty_out, a, b); }), 0);  // resized by LibTorch
  EXPECT_TRUE(torch::allclose(empty_out, at::cpu::mm(a, b), 1e-5, 1e-5));
}

TEST(OnednnMatmul, AddmmWithBetaZeroIgnoresSelfAsBlasDoes) {
  auto a = torch::randn({4, 3});
  auto b = torch::randn({3, 2});
  auto nan = torch::full({4, 2}, std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(torch::allclose(torch::addmm(nan, a, b, 0.0, 1.0), torch::mm(a, b), 1e-6, 1e-6));
}

TEST(OnednnMatmul, BmmMatchesLibTorchManyAndFewMatrices) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  torch::manual_seed(4);
  for (int64_t batch : {1, 2, 9}) {
    auto a = torch::randn({batch, 6, 4});
    auto b = torch::randn({batch, 5, 4}).transpose(1, 2);  // column-major matrices
    at::Tensor ours;
    EXPECT_EQ(products_during([&] { ours = torch::bmm(a, b); }), batch);
    EXPECT_TRUE(torch::allclose(ours, at::cpu::bmm(a, b), 1e-5, 1e-5));
    // A batch dimension broadcast by expand (stride 0).
    auto shared = torch::randn({1, 4, 3}).expand({batch, 4, 3});
    EXPECT_TRUE(torch::allclose(torch::bmm(a, shared), at::cpu::bmm(a, shared), 1e-5, 1e-5));
  }
}

TEST(OnednnMatmul, GradientsThroughLinearAndMatmulMatchLibTorch) {
  testing::KernelSwitch on(true);  // a test of the kernel: NMTZOO_KERNELS=off must not skip it
  torch::manual_seed(6);
  auto x = torch::randn({3, 4, 8}, torch::requires_grad());
  auto w = torch::randn({5, 8}, torch::requires_grad());
  auto bias = torch::randn({5}, torch::requires_grad());
  auto k = torch::randn({3, 7, 5}, torch::requires_grad());
  auto run = [&] {
    for (auto* t : {&x, &w, &bias, &k}) t->mutable_grad() = at::Tensor();
    auto y = torch::nn::functional::linear(x, w, bias);  // addmm
    auto scores = torch::matmul(y, k.transpose(1, 2));   // bmm
    (scores.tanh() * torch::arange(scores.numel()).view(scores.sizes()).sin()).sum().backward();
    return std::vector<at::Tensor>{scores.detach(), x.grad(), w.grad(), bias.grad(), k.grad()};
  };
  std::vector<at::Tensor> ours;
  EXPECT_GT(products_during([&] { ours = run(); }), 0);
  set_onednn_matmul_enabled(false);
  std::vector<at::Tensor> reference;
  EXPECT_EQ(products_during([&] { reference = run(); }), 0);
  set_onednn_matmul_enabled(true);
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(torch::allclose(ours[i], reference[i], 1e-4, 1e-4)) << i;
  }
}

TEST(OnednnMatmul, OtherDtypesStridesAndEmptyMatricesGoToLibTorch) {
  auto every_other = torch::randn({4, 10}).slice(1, 0, 10, 2);  // neither row- nor column-major
  auto b = torch::randn({5, 3});
  at::Tensor ours;
  EXPECT_EQ(products_during([&] { ours = torch::mm(every_other, b); }), 0);
  EXPECT_TRUE(torch::allclose(ours, at::cpu::mm(every_other.contiguous(), b), 1e-5, 1e-5));
  auto d = torch::randn({3, 4}, torch::kDouble);
  EXPECT_EQ(products_during([&] { ours = torch::mm(d, d.t()); }), 0);
  EXPECT_EQ(ours.scalar_type(), torch::kDouble);
  EXPECT_EQ(products_during([&] {
              ours = torch::mm(torch::randn({0, 3}), torch::randn({3, 2}));
            }),
            0);
  EXPECT_EQ(ours.sizes(), (std::vector<int64_t>{0, 2}));
  auto k0 = torch::addmm(torch::ones({2, 2}), torch::randn({2, 0}), torch::randn({0, 2}));
  EXPECT_TRUE(torch::equal(k0, torch::ones({2, 2})));
  const std::pair<KernelSelection, int64_t> products_by_selection[] = {
      {KernelSelection::off, 0}, {KernelSelection::products, 1}, {KernelSelection::all, 1}};
  for (const auto& [selection, products] : products_by_selection) {
    testing::KernelSelectionScope scope(selection);
    EXPECT_EQ(products_during([&] { torch::mm(b.t(), b); }), products);
  }
}

}  // namespace
}  // namespace nmtzoo
