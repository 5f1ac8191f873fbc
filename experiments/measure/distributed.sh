#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Data-parallel scaling benchmark (not a test): trains transformer_small on Multi30k batches in
# several layouts of processes x LibTorch threads (scripts/launch.sh, loopback Gloo between
# processes) and prints target tokens/s of the whole job and the all-reduce time per update.
# Default layouts: 1x1, then one process with two threads (a plain nmtzoo-train on this 2-core
# machine) against two single-threaded processes, alternating twice (A B A B).
#   experiments/measure/distributed.sh [--steps N] [--config FILE] [--layouts "1x1 1x2 2x1 ..."]
# The first logged window of each run is warm-up and is left out of the averages.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
steps=120
config=configs/multi30k_quickstart.yaml
layouts="1x1 1x2 2x1 1x2 2x1"
parse_args "steps: config: layouts:" "$@"
expect_args 0
prepare_workspace
out="runs/bench_distributed"
rm -rf "$out"
mkdir -p "$out"

# Mean of a "<number> <unit>" field over the log's train lines, skipping the first one.
field_mean() {
  local log="$1" unit="$2"
  grep '^train |' "$log" | sed -n '2,$p' |
    sed -nE "s#.* ([0-9.]+) ${unit} .*#\1#p" |
    awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "nan" }'
}

printf '%-22s %14s %22s\n' "processes x threads" "tgt tokens/s" "all-reduce ms/update"
run=0
for layout in $layouts; do
  procs="${layout%x*}"
  threads="${layout#*x}"
  run=$((run + 1))
  log="$out/run${run}_$layout.log"
  NMTZOO_THREADS_PER_RANK="$threads" NMTZOO_LOG_DIR="$out" MASTER_PORT=$((29600 + run)) \
    scripts/launch.sh "$procs" build/bin/nmtzoo-train --config "$config" \
    --set "training.output_dir=$out/run$run" --set "training.max_steps=$steps" \
    --set training.log_every=20 --set training.valid_every=0 --set training.valid_bleu=false \
    --set training.best_metric=loss \
    --set training.max_time=0 > "$log" 2>&1 || { tail -5 "$log" >&2; exit 1; }
  printf '%-22s %14s %22s\n' "$procs x $threads" "$(field_mean "$log" "tok/s")" \
    "$(field_mean "$log" "ms/update" | sed 's/^nan$/-/')"
done
echo "(logs in $out)"
