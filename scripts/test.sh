#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets everything up on a fresh Debian machine, builds, and runs the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/data-dir.sh"
"$root/scripts/check_layers.sh"
"$root/scripts/build.sh"
cd "${NMTZOO_BUILD_DIR:-$root/build}"
ctest --output-on-failure --parallel "$(nproc)" --timeout 600
