#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds nmtzoo with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer in
# build-sanitize/ (or $NMTZOO_SANITIZE_BUILD_DIR): every target but the dlmopen'd SentencePiece
# shim. Then runs the whole test suite there. Leaks in LibTorch and the libraries under it are
# suppressed by scripts/sanitize/lsan.supp. Exits non-zero on any failed test or any sanitizer
# report, from a test program or from an app a test runs. Extra arguments go to ctest (-R Bleu).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/data-dir.sh"

# Exported before the build too: gtest_discover_tests runs the test programs while building.
# verify_asan_link_order=0: the tests of failing writes LD_PRELOAD an interposer of write(),
# which then precedes the ASan runtime in the library list; ASan refuses that by default.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:verify_asan_link_order=0"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitize/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

export NMTZOO_BUILD_DIR="${NMTZOO_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
"$root/scripts/build.sh" -DNMTZOO_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo

# Reports go to files rather than stderr: a test that expects an app to fail would not notice a
# report, as a sanitizer exits with the same status 1.
reports="$NMTZOO_BUILD_DIR/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan:log_exe_name=1"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan:log_exe_name=1"

cd "$NMTZOO_BUILD_DIR"
status=0
ctest --output-on-failure --parallel "$(nproc)" --timeout 1800 "$@" || status=$?
if compgen -G "$reports/*" >/dev/null; then
  cat "$reports"/*
  echo "sanitize.sh: sanitizer reports above (also in $reports)" >&2
  status=1
fi
exit "$status"
