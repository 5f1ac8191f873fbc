#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bf16 training against float32 (docs/performance.md; a measurement, never a test): training
# tokens/s of one config timed by nmtzoo-bench, float32 and bf16 alternating twice (A B A B), then
# a 15-minute run of each from the same seed, validated every 200 updates, and their validation
# curves side by side (loss and BLEU by training time).
#   experiments/measure/bf16_training.sh [CONFIG] [MINUTES]   (default: the Transformer, 15)
# Runs go to runs/bf16_training/{float32,bf16} and resume where they stopped when the script is
# run again. Writes reports/bench/bf16_training.md.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 0 2
config="${args[0]:-configs/multi30k_de_en_transformer.yaml}"
minutes="${args[1]:-15}"
prepare_workspace
out=reports/bench
runs=runs/bf16_training
mkdir -p "$out" "$runs"
threads="$(nproc)"
speed="$runs/speed.txt"
if [[ ! -s "$speed" ]]; then
  for bf16 in false true false true; do
    build/bin/nmtzoo-bench -c "$config" --threads "$threads" --set "training.bf16=$bf16" |
      grep -E "^(machine|training|  )" | sed "s/^/bf16=$bf16  /"
  done > "$speed.partial"
  mv "$speed.partial" "$speed"
fi
cat "$speed"
for format in float32 bf16; do
  dir="$runs/$format"
  [[ -f "$dir/training_summary.json" ]] && continue
  resume=()
  [[ -d "$dir/checkpoints" ]] && resume=(--resume)
  build/bin/nmtzoo-train --config "$config" "${resume[@]}" --set "training.output_dir=$dir" \
    --set "training.max_time=${minutes}m" --set training.valid_every=200 \
    --set "training.bf16=$([[ $format == bf16 ]] && echo true || echo false)" --set training.threads="$threads" \
    > "$runs/$format.log" 2>&1
done
/usr/bin/python3 - "$config" "$minutes" "$runs" "$speed" > "$out/bf16_training.md.partial" <<'EOF'
import json, re, sys
config, minutes, runs, speed = sys.argv[1:]
def records(fmt):
    with open(f"{runs}/{fmt}/metrics.jsonl") as f:
        return [json.loads(line) for line in f if line.strip()]
print("# bf16 training against float32\n")
print(f"Measured by `experiments/measure/bf16_training.sh` with `{config}`, {minutes}-minute runs from the same seed,")
print("validated every 200 updates (val: greedy BLEU and the label-smoothed loss), 2 threads.\n")
print("## Training speed, A B A B (nmtzoo-bench)\n\n```")
print(open(speed).read().rstrip())
print("```\n\n## Validation by training time\n")
print("| format | update | training minutes | val loss | val nll | val BLEU |")
print("|---|---:|---:|---:|---:|---:|")
for fmt in ("float32", "bf16"):
    for r in records(fmt):
        if r.get("type") == "valid":
            print(f"| {fmt} | {r['step']} | {r['train_seconds'] / 60:.1f} | {r['loss']:.3f} | {r['nll']:.3f} | {r['bleu']:.2f} |")
print("\n## Final\n")
print("| format | updates | train tokens/s (last log) | best val BLEU |")
print("|---|---:|---:|---:|")
for fmt in ("float32", "bf16"):
    rs = records(fmt)
    train = [r for r in rs if r.get("type") == "train"]
    valid = [r for r in rs if r.get("type") == "valid"]
    print(f"| {fmt} | {valid[-1]['step'] if valid else 0} | {train[-1]['tokens_per_second']:.0f} | "
          f"{max(v['bleu'] for v in valid):.2f} |")
EOF
mv "$out/bf16_training.md.partial" "$out/bf16_training.md"
cat "$out/bf16_training.md"
