#!/usr/bin/env bash
# Data-parallel scaling benchmark (not a test): trains transformer_small on Multi30k batches with
# 1 process and with 2 processes (scripts/launch.sh, loopback Gloo), one LibTorch thread each, and
# prints target tokens/s of the whole job, the speed-up, and the all-reduce time per update.
#   scripts/bench_distributed.sh [--steps N] [--config FILE]
# The first logged window of each run is warm-up and is left out of the averages.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
steps=120
config=configs/multi30k_quickstart.yaml
while (($#)); do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "bench_distributed.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$root/scripts/data-dir.sh"
"$root/scripts/build.sh" >/dev/null
cd "$root"
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

declare -A tokens reduce
for procs in 1 2; do
  log="$out/procs$procs.log"
  NMTZOO_THREADS_PER_RANK=1 NMTZOO_LOG_DIR="$out" MASTER_PORT=$((29600 + procs)) \
    scripts/launch.sh "$procs" build/bin/nmtzoo-train --config "$config" \
    --set "training.output_dir=$out/run$procs" --set "training.max_steps=$steps" \
    --set training.log_every=20 --set training.valid_every=0 --set training.valid_bleu=false \
    --set training.best_metric=loss \
    --set training.max_time=0 > "$log" 2>&1 || { tail -5 "$log" >&2; exit 1; }
  tokens[$procs]="$(field_mean "$log" "tok/s")"
  reduce[$procs]="$(field_mean "$log" "ms/update" | sed 's/^nan$/-/')"
done
speedup="$(awk -v a="${tokens[1]}" -v b="${tokens[2]}" 'BEGIN { printf "%.2f", b / a }')"
printf '%-10s %14s %22s\n' processes "tgt tokens/s" "all-reduce ms/update"
for procs in 1 2; do printf '%-10s %14s %22s\n' "$procs" "${tokens[$procs]}" "${reduce[$procs]}"; done
echo "speed-up with 2 processes: ${speedup}x (logs in $out)"
