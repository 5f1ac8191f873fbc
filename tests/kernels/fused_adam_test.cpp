// SPDX-License-Identifier: MIT
#include "libtorch/kernels/fused_adam.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "libtorch/kernels/kernels.h"
#include "tests/support/kernel_scopes.h"

namespace nmtzoo {
namespace {

using Params = std::vector<at::Tensor>;

// Fused vs LibTorch's step: the largest difference over the reference's largest magnitude, per
// tensor (parameter, exp_avg, exp_avg_sq). The operators, their order and float rounding are
// LibTorch's. On a CPU with AVX-512 both run AVX-512 code with the multiply-adds fused in the same
// places (add with alpha, addcmul): the same bits, unless ATEN_CPU_CAPABILITY sends LibTorch to
// other kernels. The portable path rounds those multiply-adds twice, which moves a moment by at
// most an ulp now and then: about 1e-7 after 20 steps, so 1e-6 leaves room without hiding a
// wrong formula (a wrong bias correction, decay or epsilon moves values by 1e-3 or more).
double tolerance() {
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  const bool both_avx512 =
      avx512_available() && (capability == nullptr || std::string(capability) == "avx512");
  return both_avx512 ? 0.0 : 1e-6;
}

double relative_error(const at::Tensor& ours, const at::Tensor& reference) {
  const double scale = std::max(reference.abs().max().item<double>(), 1e-30);
  return (ours - reference).abs().max().item<double>() / scale;
}

using testing::Avx512Switch;
using testing::KernelSwitch;
using testing::ThreadCount;

const std::vector<std::vector<int64_t>> kShapes{{1}, {7}, {1000003}, {33, 65}};

Params make_params(const std::vector<std::vector<int64_t>>& shapes, uint64_t seed) {
  torch::manual_seed(seed);
  Params params;
  for (const auto& shape : shapes) params.push_back(torch::randn(shape).requires_grad_());
  return params;
}

// Detached copies with the same values, strides and dtype.
Params copy_params(const Params& params) {
  Params copies;
  for (const auto& p : params) {
    auto copy = torch::empty_strided(p.sizes(), p.strides(), p.options());
    copy.copy_(p.detach());
    copies.push_back(copy.requires_grad_());
  }
  return copies;
}

// The same gradients on every copy: a fixed function of the step and the parameter's index.
void set_grads(const std::vector<Params*>& copies, int step) {
  for (size_t i = 0; i < copies[0]->size(); ++i) {
    torch::manual_seed(1000 * static_cast<uint64_t>(step) + i);
    const auto& p = (*copies[0])[i];
    const auto grad = torch::randn(p.sizes(), p.options());
    for (auto* params : copies) (*params)[i].mutable_grad() = grad.clone();
  }
}

template <typename State>
const State& state_of(torch::optim::Optimizer& optimizer, const at::Tensor& p) {
  return static_cast<const State&>(
      *optimizer.state().at(c10::guts::to_string(p.unsafeGetTensorImpl())));
}

// Runs `steps` steps of `ours` and `reference` on copies with the same gradients.
void run(torch::optim::Optimizer& ours, Params& our_params, torch::optim::Optimizer& reference,
         Params& reference_params, int steps, int first_step = 0) {
  for (int step = first_step; step < first_step + steps; ++step) {
    set_grads({&our_params, &reference_params}, step);
    ours.step();
    reference.step();
  }
}

template <typename State>
void expect_close(torch::optim::Optimizer& ours, const Params& our_params,
                  torch::optim::Optimizer& reference, const Params& reference_params,
                  const std::string& what) {
  for (size_t i = 0; i < our_params.size(); ++i) {
    const auto& a = state_of<State>(ours, our_params[i]);
    const auto& b = state_of<State>(reference, reference_params[i]);
    EXPECT_EQ(a.step(), b.step()) << what << " parameter " << i;
    EXPECT_LE(relative_error(our_params[i], reference_params[i]), tolerance())
        << what << " parameter " << i;
    EXPECT_LE(relative_error(a.exp_avg(), b.exp_avg()), tolerance()) << what << " exp_avg " << i;
    EXPECT_LE(relative_error(a.exp_avg_sq(), b.exp_avg_sq()), tolerance())
        << what << " exp_avg_sq " << i;
  }
}

template <typename State>
void expect_equal(torch::optim::Optimizer& ours, const Params& our_params,
                  torch::optim::Optimizer& reference, const Params& reference_params,
                  const std::string& what) {
  for (size_t i = 0; i < our_params.size(); ++i) {
    const auto& a = state_of<State>(ours, our_params[i]);
    const auto& b = state_of<State>(reference, reference_params[i]);
    EXPECT_EQ(a.step(), b.step()) << what << " parameter " << i;
    EXPECT_TRUE(torch::equal(our_params[i], reference_params[i])) << what << " parameter " << i;
    EXPECT_TRUE(torch::equal(a.exp_avg(), b.exp_avg())) << what << " exp_avg " << i;
    EXPECT_TRUE(torch::equal(a.exp_avg_sq(), b.exp_avg_sq())) << what << " exp_avg_sq " << i;
    EXPECT_EQ(a.max_exp_avg_sq().defined(), b.max_exp_avg_sq().defined()) << what << " " << i;
    if (a.max_exp_avg_sq().defined()) {
      EXPECT_TRUE(torch::equal(a.max_exp_avg_sq(), b.max_exp_avg_sq()))
          << what << " max_exp_avg_sq " << i;
    }
  }
}

// 20 steps of the fused optimizer and LibTorch's, on both paths, with and without weight decay.
template <typename Fused, typename Reference, typename Options, typename State>
void expect_matches_libtorch(uint64_t seed) {
  KernelSwitch on(true);
  for (bool avx512 : {true, false}) {
    Avx512Switch path(avx512);
    for (double weight_decay : {0.0, 0.1}) {
      auto params = make_params(kShapes, seed);
      auto reference_params = copy_params(params);
      const auto options = Options(1e-2).weight_decay(weight_decay);
      Fused ours(params, options);
      Reference reference(reference_params, options);
      run(ours, params, reference, reference_params, 20);
      expect_close<State>(
          ours, params, reference, reference_params,
          "weight_decay " + std::to_string(weight_decay) + (avx512 ? ", AVX-512" : ", portable"));
    }
  }
}

TEST(FusedAdam, MatchesLibTorchAdamWithAndWithoutWeightDecay) {
  expect_matches_libtorch<FusedAdam, torch::optim::Adam, torch::optim::AdamOptions,
                          torch::optim::AdamParamState>(1);
}

TEST(FusedAdam, MatchesLibTorchAdamWWithAndWithoutWeightDecay) {
  expect_matches_libtorch<FusedAdamW, torch::optim::AdamW, torch::optim::AdamWOptions,
                          torch::optim::AdamWParamState>(2);
}

TEST(FusedAdam, OneAndTwoThreadsGiveTheSameBits) {
  KernelSwitch on(true);
  auto one = make_params(kShapes, 3);
  auto two = copy_params(one);
  const auto options = torch::optim::AdamWOptions(1e-2).weight_decay(0.1);
  FusedAdamW one_thread(one, options);
  FusedAdamW two_threads(two, options);
  for (int step = 0; step < 5; ++step) {
    set_grads({&one, &two}, step);
    {
      ThreadCount threads(1);
      one_thread.step();
    }
    ThreadCount threads(2);
    two_threads.step();
  }
  expect_equal<torch::optim::AdamWParamState>(one_thread, one, two_threads, two, "1 vs 2 threads");
}

TEST(FusedAdam, NonContiguousAndDoubleParametersTakeLibTorchsStep) {
  KernelSwitch on(true);
  torch::manual_seed(4);
  const auto contiguous = torch::randn({5, 3}).requires_grad_();
  const auto transposed =
      torch::randn({65, 33}).t().detach().requires_grad_();  // (33, 65), not contiguous
  const auto float64 = torch::randn({7}, torch::kDouble).requires_grad_();
  ASSERT_FALSE(transposed.is_contiguous());
  Params params{contiguous, transposed, float64};
  auto reference_params = copy_params(params);
  ASSERT_FALSE(reference_params[1].is_contiguous());
  const auto options = torch::optim::AdamOptions(1e-2).weight_decay(0.1);
  FusedAdam ours(params, options);
  torch::optim::Adam reference(reference_params, options);
  run(ours, params, reference, reference_params, 5);
  expect_close<torch::optim::AdamParamState>(ours, {params[0]}, reference, {reference_params[0]},
                                             "contiguous");
  expect_equal<torch::optim::AdamParamState>(ours, {params[1], params[2]}, reference,
                                             {reference_params[1], reference_params[2]},
                                             "fallback");
}

// scale_next_gradients(f) then step() gives the bits of grad.mul_(f) then step(), for the fused
// kernel's parameters and LibTorch's (non-contiguous, float64), with the kernels on and off; the
// factor holds for one step only.
template <typename Optimizer, typename State, typename Options>
void expect_scaling_in_step_equals_scaling_first(const Options& options) {
  for (const bool kernels : {true, false}) {
    KernelSwitch fast(kernels);
    torch::manual_seed(6);
    Params params{torch::randn({33, 65}).requires_grad_(),
                  torch::randn({65, 33}).t().detach().requires_grad_(),
                  torch::randn({7}, torch::kDouble).requires_grad_()};
    auto reference_params = copy_params(params);
    Optimizer ours(params, options);
    Optimizer reference(reference_params, options);
    const std::vector<double> factors{0.25, 1.0 / 37, 1.0};
    for (size_t step = 0; step < factors.size(); ++step) {
      set_grads({&params, &reference_params}, static_cast<int>(step));
      if (factors[step] != 1.0) ours.scale_next_gradients(factors[step]);
      for (auto& p : reference_params) p.mutable_grad().mul_(factors[step]);
      ours.step();
      reference.step();
    }
    expect_equal<State>(ours, params, reference, reference_params,
                        kernels ? "kernels on" : "kernels off");
  }
}

TEST(FusedAdam, ScalingTheGradientsInTheStepEqualsScalingThemFirst) {
  expect_scaling_in_step_equals_scaling_first<FusedAdam, torch::optim::AdamParamState>(
      torch::optim::AdamOptions(1e-2).weight_decay(0.1));
  expect_scaling_in_step_equals_scaling_first<FusedAdamW, torch::optim::AdamWParamState>(
      torch::optim::AdamWOptions(1e-2).weight_decay(0.1));
}

TEST(FusedAdam, AmsgradTakesLibTorchsStep) {
  KernelSwitch on(true);
  auto params = make_params({{7}, {33, 65}}, 5);
  auto reference_params = copy_params(params);
  const auto adam = torch::optim::AdamOptions(1e-2).weight_decay(0.1).amsgrad(true);
  FusedAdam ours(params, adam);
  torch::optim::Adam reference(reference_params, adam);
  run(ours, params, reference, reference_params, 5);
  expect_equal<torch::optim::AdamParamState>(ours, params, reference, reference_params,
                                             "Adam amsgrad");

  auto w_params = make_params({{7}, {33, 65}}, 6);
  auto w_reference_params = copy_params(w_params);
  const auto adamw = torch::optim::AdamWOptions(1e-2).weight_decay(0.1).amsgrad(true);
  FusedAdamW w_ours(w_params, adamw);
  torch::optim::AdamW w_reference(w_reference_params, adamw);
  run(w_ours, w_params, w_reference, w_reference_params, 5);
  expect_equal<torch::optim::AdamWParamState>(w_ours, w_params, w_reference, w_reference_params,
                                              "AdamW amsgrad");
}

TEST(FusedAdam, CheckpointsResumeAcrossFusedAndLibTorch) {
  KernelSwitch on(true);
  const auto options = torch::optim::AdamOptions(1e-2).weight_decay(0.1);
  // 10 fused steps, saved.
  auto params = make_params({{7}, {33, 65}, {100003}}, 7);
  FusedAdam fused(params, options);
  for (int step = 0; step < 10; ++step) {
    set_grads({&params}, step);
    fused.step();
  }
  std::stringstream checkpoint;
  torch::save(fused, checkpoint);

  // Loaded into a fused optimizer and into LibTorch's, each over copies of the parameters.
  auto resumed_params = copy_params(params);
  FusedAdam resumed(resumed_params, options);
  torch::load(resumed, checkpoint);
  auto base_params = copy_params(params);
  torch::optim::Adam base(base_params, options);
  checkpoint.seekg(0);
  torch::load(base, checkpoint);
  expect_equal<torch::optim::AdamParamState>(base, base_params, fused, params,
                                             "loaded into LibTorch's");

  // 10 more steps with the same gradients: the fused resume is exact, LibTorch's within the
  // tolerance (its step count came along, or the bias corrections would restart).
  for (int step = 10; step < 20; ++step) {
    set_grads({&params, &resumed_params, &base_params}, step);
    fused.step();
    resumed.step();
    base.step();
  }
  expect_equal<torch::optim::AdamParamState>(resumed, resumed_params, fused, params,
                                             "fused resumed");
  expect_close<torch::optim::AdamParamState>(base, base_params, fused, params,
                                             "LibTorch's resumed");

  // And back: LibTorch's state, loaded into a fused optimizer, continues like LibTorch's.
  std::stringstream back;
  torch::save(base, back);
  auto fused_again_params = copy_params(base_params);
  FusedAdam fused_again(fused_again_params, options);
  torch::load(fused_again, back);
  expect_equal<torch::optim::AdamParamState>(fused_again, fused_again_params, base, base_params,
                                             "loaded into fused");
  run(fused_again, fused_again_params, base, base_params, 10, 20);
  expect_close<torch::optim::AdamParamState>(fused_again, fused_again_params, base, base_params,
                                             "fused resumed from LibTorch's");
}

TEST(FusedAdam, SwitchOffGivesLibTorchsStepBitwise) {
  {
    KernelSwitch on(true);
    const Params cpu{torch::randn({3}).requires_grad_()};
    EXPECT_NE(dynamic_cast<FusedAdam*>(make_adam(cpu, torch::optim::AdamOptions(), false).get()),
              nullptr);
    EXPECT_NE(dynamic_cast<FusedAdamW*>(make_adam(cpu, torch::optim::AdamOptions(), true).get()),
              nullptr);
  }
  KernelSwitch off(false);
  auto params = make_params(kShapes, 8);
  auto reference_params = copy_params(params);
  const auto options = torch::optim::AdamOptions(1e-2).weight_decay(0.1);
  auto made = make_adam(params, options, false);
  EXPECT_EQ(dynamic_cast<FusedAdam*>(made.get()), nullptr);
  EXPECT_NE(dynamic_cast<torch::optim::Adam*>(made.get()), nullptr);
  auto made_w = make_adam(params, options, true);
  EXPECT_EQ(dynamic_cast<FusedAdamW*>(made_w.get()), nullptr);
  EXPECT_NE(dynamic_cast<torch::optim::AdamW*>(made_w.get()), nullptr);

  // A fused optimizer made while the switch was on takes LibTorch's step once it is off.
  FusedAdam ours(params, options);
  torch::optim::Adam reference(reference_params, options);
  run(ours, params, reference, reference_params, 5);
  expect_equal<torch::optim::AdamParamState>(ours, params, reference, reference_params,
                                             "switch off");
}

}  // namespace
}  // namespace nmtzoo
