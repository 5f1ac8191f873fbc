#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times one Adam step over 10.4M float parameters in 38 tensors (transformer_small's shapes and
# more), LibTorch's torch::optim::Adam against nmtzoo::FusedAdam (libtorch/kernels/fused_adam.h),
# alternating A B A B in one process, with 2 threads (a benchmark, never a test):
#   experiments/measure/adam_step.sh [BUILD_DIR]
# Compiles experiments/measure/adam_step.cpp against BUILD_DIR's libnmtzoo_kernels (build/ by
# default) into a temporary folder and runs it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
g++ -O2 -std=c++17 -I"$root" -I/usr/include/torch/csrc/api/include "$root/experiments/measure/adam_step.cpp" \
  -o "$scratch/adam_step" -L"$build/bin" -lnmtzoo_kernels -Wl,-rpath,"$build/bin" -ltorch -ltorch_cpu -lc10
"$scratch/adam_step"
