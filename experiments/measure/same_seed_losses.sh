#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Trains one recipe for N updates from one seed with two builds and compares every update's
# training loss (issue 57's quality check for fused kernels: within 1e-3 relative of the build
# without them). A measurement, never a test:
#   experiments/measure/same_seed_losses.sh BIN_A BIN_B OUT_DIR [--arch transformer|rnn]
#                                           [--steps N] [--threads N] [--set KEY=VALUE ...]
# Runs configs/multi30k_de_en_ARCH.yaml with training.seed 7, no validation, a loss logged per
# update; prints the largest relative difference, where it is, and the losses every 50 updates.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
arch=transformer steps=200 threads=1
parse_args "arch: steps: threads: set+" "$@"
expect_args 3
positive_integer --steps "$steps"
bin_a="$(cd "${args[0]}" && pwd)"; bin_b="$(cd "${args[1]}" && pwd)"; out="${args[2]}"
frozen_bin="$bin_a" prepare_workspace
mkdir -p "$out"
for side in a b; do
  bin="$bin_a"; [[ $side == b ]] && bin="$bin_b"
  run_dir="$out/$side"
  rm -rf "$run_dir"
  echo "== build ${side^^} ($bin): $steps updates"
  "$bin/nmtzoo-train" --config "configs/multi30k_de_en_$arch.yaml" --set training.output_dir="$run_dir" \
    --set training.max_steps="$steps" --set training.max_time=0 --set training.log_every=1 \
    --set training.valid_every=0 --set training.valid_bleu=false --set training.best_metric=loss \
    --set training.seed=7 --set training.threads="$threads" "${set_args[@]}" >"$out/$side.log" 2>&1 ||
    die "build ${side^^} failed; see $out/$side.log"
  grep '"type":"train"' "$run_dir/metrics.jsonl" |
    sed -E 's/.*"loss":([^,}]*).*"step":([0-9]+).*/\2 \1/' >"$out/$side.losses"
done
/usr/bin/python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
def losses(side):
    return {int(s): float(l) for s, l in (line.split() for line in open(f"{out}/{side}.losses"))}
a, b = losses("a"), losses("b")
steps = sorted(set(a) & set(b))
relative = {s: abs(a[s] - b[s]) / abs(a[s]) for s in steps}
worst = max(steps, key=relative.get)
print(f"{len(steps)} updates: largest relative difference {relative[worst]:.2e} at update {worst} "
      f"(A {a[worst]:.6f}, B {b[worst]:.6f})")
for s in steps:
    if s % 50 == 0 or s == steps[-1]:
        print(f"  update {s:4d}: A {a[s]:.6f}  B {b[s]:.6f}  relative {relative[s]:.2e}")
PY
