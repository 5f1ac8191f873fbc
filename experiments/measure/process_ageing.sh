#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 57's ageing check: whether a training process slows as it ages
# (reports/bench/rnn_training_slowdown.md). Trains configs/multi30k_de_en_ARCH.yaml (default: the
# RNN at its recipe, bf16 included) from seed 1 for --steps updates (default 1,200), logging
# tokens/s every 100 and keeping the checkpoint of update --from (default 1,000); then trains
# updates --from+1..--steps again in a fresh process resumed from that checkpoint. The resume is
# exact (the same batches in the same order), so the two processes' windows differ only in the
# process's age. A measurement, never a test:
#   experiments/measure/process_ageing.sh BIN OUT_DIR [--arch rnn|transformer] [--steps N]
#                                         [--from N] [--threads N] [--set KEY=VALUE ...]
# BIN is a frozen copy of build/bin. Run it pinned (taskset) with the other cores' load steady.
# Resumable: a finished phase (training_summary.json) is kept. Prints target tokens/s per 100
# updates of both processes, the aged process's windows after --from against its first 100 and
# against the fresh process's same windows.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
arch=rnn steps=1200 from=1000 threads=1
parse_args "arch: steps: from: threads: set+" "$@"
expect_args 2
for option in steps from threads; do positive_integer "--$option" "${!option}"; done
((from % 100 == 0 && from < steps)) || usage_error "--from must be a multiple of 100 below --steps"
bin="$(cd "${args[0]}" && pwd)"; out="${args[1]}"
frozen_bin="$bin" prepare_workspace
mkdir -p "$out"
out="$(cd "$out" && pwd)"

train() {  # run_dir log [extra nmtzoo-train arguments]
  local run_dir=$1 log=$2
  shift 2
  [[ -f "$run_dir/training_summary.json" ]] && return 0
  echo "== $(basename "$run_dir"): to update $steps ($bin)"
  "$bin/nmtzoo-train" --config "configs/multi30k_de_en_$arch.yaml" --set training.output_dir="$run_dir" \
    --set training.max_steps="$steps" --set training.max_time=0 --set training.seed=1 \
    --set training.threads="$threads" --set training.log_every=100 --set training.valid_every="$from" \
    --set training.keep_last=100 "${set_args[@]}" "$@" >>"$log" 2>&1 ||
    die "$(basename "$run_dir") failed; see $log"
}

aged="$out/aged" fresh="$out/fresh"
if [[ ! -f "$aged/training_summary.json" ]]; then
  # A killed aged process is started again: resuming it would make it young.
  rm -rf "$aged" "$out/aged.log"
  train "$aged" "$out/aged.log"
fi
if [[ ! -f "$fresh/training_summary.json" ]]; then
  rm -rf "$fresh" "$out/fresh.log"
  mkdir -p "$fresh/checkpoints"
  cp "$aged/checkpoints/checkpoint_$from.pt" "$fresh/checkpoints/checkpoint_last.pt"
  train "$fresh" "$out/fresh.log" --resume
fi

/usr/bin/python3 - "$out" "$from" <<'PY'
import json, sys
out, start = sys.argv[1], int(sys.argv[2])
def speeds(run):
    return {r["step"]: r["tokens_per_second"] for r in map(json.loads, open(f"{out}/{run}/metrics.jsonl"))
            if r.get("type") == "train"}
aged, fresh = speeds("aged"), speeds("fresh")
print("target tokens/s per 100 updates (validation excluded), the aged process:")
print("  " + "  ".join(f"{step}: {aged[step]:,.0f}" for step in sorted(aged)))
print("  the fresh process from update %d: " % start +
      "  ".join(f"{step}: {fresh[step]:,.0f}" for step in sorted(fresh) if step > start))
first = aged[min(aged)]
for step in sorted(s for s in fresh if s > start and s in aged):
    print(f"updates {step - 99}-{step}: aged {aged[step]:,.0f} = {aged[step] / first:.3f} of its first 100, "
          f"{aged[step] / fresh[step]:.3f} of the fresh process's {fresh[step]:,.0f}")
PY
