#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compares two builds' whole training runs side by side, A B A B, so the machine's drift hits both
# (a benchmark, never a test). Unlike compare_builds.sh (nmtzoo-bench: a few steps), it runs the
# real trainer over whole epochs: epoch boundaries, validation and checkpoints included.
#   experiments/measure/compare_builds_training.sh BIN_A BIN_B OUT_DIR [--rounds N] [--config CONFIG]
#                                                  [--epochs N] [--set KEY=VALUE ...]
# Each run trains CONFIG (default configs/multi30k_de_en_rnn.yaml) from scratch for --epochs
# (default 3) with the same seed, 2 threads, into OUT_DIR/run.SIDE.ROUND, under GNU time. Prints
# every run's wall time, target tokens/s, minor page faults, system time and peak RSS, then the
# mean of each build and B / A.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
rounds=2 config=configs/multi30k_de_en_rnn.yaml epochs=3
parse_args "rounds: config: epochs: set+" "$@"
expect_args 3
bin_a="$(cd "${args[0]}" && pwd)"; bin_b="$(cd "${args[1]}" && pwd)"; out="${args[2]}"
[[ -x /usr/bin/time ]] || die "needs GNU time (apt install time)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root"
for ((round = 1; round <= rounds; ++round)); do
  for side in a b; do
    bin="$bin_a"; [[ $side == b ]] && bin="$bin_b"
    run="$out/run.$side.$round"
    rm -rf "$run"
    echo "== round $round, build ${side^^} ($bin)"
    /usr/bin/time -f 'time: wall %e s, system %S s, minor faults %R, peak RSS %M kB' \
      -o "$out/time.$side.$round" "$bin/nmtzoo-train" --config "$config" \
      --set training.output_dir="$run" --set training.max_time=0 --set training.max_steps=0 \
      --set training.max_epochs="$epochs" --set training.threads=2 "${set_args[@]}" \
      > "$out/log.$side.$round" 2>&1
    grep -E "^(reached|stopped)" "$out/log.$side.$round" || tail -3 "$out/log.$side.$round"
    cat "$out/time.$side.$round"
  done
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figures(side, r):
    log = open(f"{out}/log.{side}.{r}").read()
    timed = open(f"{out}/time.{side}.{r}").read()
    field = lambda pattern, text: float(re.search(pattern, text).group(1))
    return {"wall seconds": field(r"wall ([0-9.]+) s", timed),
            "target tokens/s while training": field(r"([0-9.]+) target tokens/s", log),
            "minor page faults": field(r"minor faults ([0-9]+)", timed),
            "system seconds": field(r"system ([0-9.]+) s", timed),
            "peak RSS MB": field(r"peak RSS ([0-9]+) kB", timed) / 1024}
runs = {side: [figures(side, r) for r in range(1, rounds + 1)] for side in "ab"}
print(f"\nmean of {rounds} runs per build")
for key in runs["a"][0]:
    a = [run[key] for run in runs["a"]]
    b = [run[key] for run in runs["b"]]
    ma, mb = statistics.mean(a), statistics.mean(b)
    print(f"  {key:<32} A {ma:12.1f}  B {mb:12.1f}  B/A {mb / ma:6.3f}"
          f"   (A {', '.join(f'{x:.0f}' for x in a)}; B {', '.join(f'{x:.0f}' for x in b)})")
PY
