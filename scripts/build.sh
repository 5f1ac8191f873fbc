#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs system packages (scripts/setup.sh), then configures and builds nmtzoo in build/ (or $NMTZOO_BUILD_DIR).
# Extra arguments go to CMake, e.g. scripts/build.sh -DCMAKE_PREFIX_PATH=/opt/libtorch-cuda
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${NMTZOO_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
generator=()
command -v ninja >/dev/null && [[ ! -f "$build/Makefile" ]] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
