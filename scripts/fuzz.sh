#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes the torch-free parsers (fuzz/<target>_fuzzer.cpp) with libFuzzer, each for a bounded time,
# and keeps what the runs find. Installs clang (scripts/setup.sh --with-fuzz); builds only the fuzz
# targets, in build-fuzz/ (clang, -DNMTZOO_FUZZ=ON: libFuzzer with ASan and UBSan, no tests); runs
# each target for N seconds (default 60) on a scratch copy of fuzz/corpus/<target>/, restarting
# after a crash so that every target gets its time; merges the inputs that add coverage back into
# fuzz/corpus/<target>/ (commit them: ctest's Fuzz.<target>.ReplaysCorpus replays that folder);
# and prints per target the executions, seconds, new corpus files, crashes (timeouts and
# out-of-memory included) and where their inputs are. Exit status 1 when anything crashed.
# `build-fuzz/bin/<target>_fuzzer INPUT` replays one input; once its bug is fixed, copy the input
# into fuzz/corpus/<target>/ as regression-<what>, so that it stays a regression test.
#
#   scripts/fuzz.sh [--seconds N] [target...] [-- libFuzzer flags]
#   e.g. nice -n 19 scripts/fuzz.sh --seconds 300 chrf line_reader -- -only_ascii=1
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"

seconds=60
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="${2:-}"; shift 2 || shift ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
libfuzzer_flags=("$@")
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds takes a positive number" >&2; exit 2; }
all_targets=()
for source in "$root"/fuzz/*_fuzzer.cpp; do
  name="${source##*/}"
  all_targets+=("${name%_fuzzer.cpp}")
done
((${#targets[@]})) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [[ -f "$root/fuzz/${target}_fuzzer.cpp" ]] ||
    { echo "fuzz.sh: no target '$target' (targets: ${all_targets[*]})" >&2; exit 2; }
done

"$root/scripts/setup.sh" --with-fuzz
generator=()
command -v ninja >/dev/null && [[ ! -f "$build/Makefile" ]] && generator=(-G Ninja)
CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNMTZOO_FUZZ=ON -DNMTZOO_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]/%/_fuzzer}"

limits=(-rss_limit_mb=2048 -timeout=10)
count_files() { find "$1" -type f | wc -l; }
kib() { echo $(($(du -sb "$1" | cut -f1) / 1024)); }
status=0
report=()
for target in "${targets[@]}"; do
  fuzzer="$build/bin/${target}_fuzzer"
  corpus="$root/fuzz/corpus/$target"
  work="$build/fuzzing/$target"  # replaced at every run
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/crashes" "$corpus"
  cp -r "$corpus/." "$work/corpus/"
  echo "fuzz.sh: $target for ${seconds}s (log: $work/fuzz.log)" >&2

  start=$(date +%s)
  # -fork=1: the fuzzing runs in a child process, restarted after a crash, a timeout or an
  # out-of-memory, each input saved in crashes/.
  (cd "$work" && "$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" "${limits[@]}" -artifact_prefix="$work/crashes/" \
    "${libfuzzer_flags[@]}" corpus) \
    >"$work/fuzz.log" 2>&1 || true
  elapsed=$(($(date +%s) - start))
  executions=$(grep -oE '^#[0-9]+' "$work/fuzz.log" | tail -1 | tr -d '#')

  before=$(count_files "$corpus")
  # Adds the inputs that reach new edges; with hit counts too (-use_counters=1) hundreds of
  # near-duplicates would qualify.
  if ! "$fuzzer" -merge=1 -use_counters=0 "${limits[@]}" "$corpus" "$work/corpus" \
    >"$work/merge.log" 2>&1; then
    echo "fuzz.sh: merging $target's corpus failed, see $work/merge.log" >&2
    status=1
  fi
  added=$(($(count_files "$corpus") - before))
  crashes=$(count_files "$work/crashes")
  ((crashes == 0)) || status=1
  report+=("$(printf '%-16s %12s %8s %10s %8s  %s' "$target" "${executions:-?}" "$elapsed" \
    "$added" "$crashes" "$(count_files "$corpus") files, $(kib "$corpus") KiB")")
  ((crashes == 0)) || report+=("$(printf '%16s crash inputs in %s' '' "$work/crashes/")")
done

printf '%-16s %12s %8s %10s %8s  %s\n' target executions seconds new-inputs crashes corpus
printf '%s\n' "${report[@]}"
exit "$status"
