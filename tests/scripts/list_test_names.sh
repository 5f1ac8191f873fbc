#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints every test a build runs, one name a line, sorted: each GoogleTest test of the test
# programs as Suite.Test (a value-parameterised one as Suite.Test/N), then every other ctest test
# (scripts, fuzz replays, Python, a GoogleTest test run under another name) by its ctest name.
# ctest runs the LibTorch tests one suite a process (cmake/gtest_suites.cmake), so `ctest -N`
# alone lists suites, not tests. tests/test_names.txt is this list as it must at least be
# (tests/scripts/test_names_test.sh).
#   tests/scripts/list_test_names.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: tests/scripts/list_test_names.sh BUILD_DIR}" && pwd)"
programs=(nmtzoo_base_tests nmtzoo_torch_tests)

for program in "${programs[@]}"; do
  "$build/bin/$program" --gtest_list_tests | awk '
    /^[^ ]/ { suite = $1; next }
    /^  [^ ]/ { print suite $1 }'
done > "$build/gtest_names.txt"

# A ctest test that runs one of those programs on exactly its own name, or on a whole suite, is
# listed above by its tests' names.
(cd "$build" && ctest --show-only=json-v1) | /usr/bin/python3 -c '
import json, os, sys
programs = set(sys.argv[1:])
for test in json.load(sys.stdin)["tests"]:
    name, command = test["name"], test.get("command") or []
    if name.endswith("_NOT_BUILT"):
        continue
    filters = [a[len("--gtest_filter="):] for a in command if a.startswith("--gtest_filter=")]
    # gtest_discover_tests names a value-parameterised test "Suite.Test/N  # GetParam() = ...".
    if command and os.path.basename(command[0]) in programs and filters and \
            filters[0] == name.split("  # GetParam() = ")[0]:
        continue
    print(name)
' "${programs[@]}" | cat "$build/gtest_names.txt" - | sort -u
rm -f "$build/gtest_names.txt"
