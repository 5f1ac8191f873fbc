#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times the README's test command as a new user meets it, for each given revision in turn (a
# benchmark, never a test; the machine must be otherwise idle): a fresh clone of REV beside
# ../shared, then scripts/build.sh (set-up check, configure, build) and ctest as scripts/test.sh
# runs it, with NMTZOO_REQUIRE_ALL=1 as CI. Prints one line a revision: build and ctest seconds
# (wall), the build's CPU seconds (user + sys), its ninja steps, ctest's result, and the five
# longest ctest tests; keeps each clone's logs and .ninja_log under OUT_DIR/REV.
#   experiments/measure/fresh_clone_times.sh OUT_DIR REV [REV ...]
# Packages must already be installed (scripts/setup.sh): its time is not counted.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 2 any
out="$(mkdir -p "${args[0]}" && cd "${args[0]}" && pwd)"
shared="$(cd "$root/../shared" && pwd)" || die "no ../shared beside the project"

for rev in "${args[@]:1}"; do
  scratch="$(mktemp -d)"
  mkdir -p "$out/$rev"
  git clone -q "$root" "$scratch/main"
  git -C "$scratch/main" checkout -q "$rev"
  ln -s "$shared" "$scratch/shared"
  (
    cd "$scratch/main"
    export NMTZOO_REQUIRE_ALL=1
    start=$SECONDS
    /usr/bin/time -o "$out/$rev/build.time" -f "%e %U %S" scripts/build.sh >"$out/$rev/build.log" 2>&1
    build_s=$((SECONDS - start))
    source scripts/data-dir.sh >/dev/null
    cd build
    start=$SECONDS
    status=0
    ctest --output-on-failure --parallel "$(nproc)" --timeout 600 >"$out/$rev/ctest.log" 2>&1 || status=$?
    ctest_s=$((SECONDS - start))
    cp .ninja_log "$out/$rev/ninja_log"
    read -r _ user sys <"$out/$rev/build.time"
    steps="$(grep -c '^[0-9]' .ninja_log)"
    longest="$(grep -E ' Passed +[0-9.]+ sec' "$out/$rev/ctest.log" |
      sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*Passed +([0-9.]+) sec/\2 s \1/' | sort -rn | head -5 | paste -sd, -)"
    printf '%s: build %d s (CPU %.0f s, %d steps), ctest %d s (%s), longest: %s\n' "$rev" "$build_s" \
      "$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" "$steps" "$ctest_s" "$(tail -n 3 "$out/$rev/ctest.log" | grep -oE '[0-9]+% tests passed.*' || echo "exit $status")" \
      "$longest"
  ) | tee -a "$out/times.txt"
  rm -rf "$scratch"
done
