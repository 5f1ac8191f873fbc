#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No test is lost: every name of tests/test_names.txt (the tests there were when ctest began
# running the LibTorch tests one suite a process, and any added since) is a test this build runs
# (tests/scripts/list_test_names.sh). A test removed on purpose leaves the file in the same commit.
#   tests/scripts/test_names_test.sh PROJECT_ROOT BUILD_DIR
set -euo pipefail
project="$(cd "${1:?usage: test_names_test.sh PROJECT_ROOT BUILD_DIR}" && pwd)"
build="$(cd "${2:?usage: test_names_test.sh PROJECT_ROOT BUILD_DIR}" && pwd)"
current="$("$project/tests/scripts/list_test_names.sh" "$build")"
missing="$(comm -23 <(sort -u "$project/tests/test_names.txt") <(sort -u <<<"$current"))"
if [[ -n "$missing" ]]; then
  echo "FAILED: $(wc -l <<<"$missing") tests of tests/test_names.txt are not run by this build:" >&2
  echo "$missing" >&2
  exit 1
fi
echo "all $(wc -l <"$project/tests/test_names.txt") tests of tests/test_names.txt run ($(wc -l <<<"$current") tests in all)"
