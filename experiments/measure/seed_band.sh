#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 57's second quality check: whether build B's validation BLEU after a short run falls
# within the seed band of build A (the build without the kernels being checked). Trains
# configs/multi30k_de_en_ARCH.yaml in float32 for --steps updates (default 2,350: 15 minutes of
# the reference machine, half the directions grid's 30-minute 4,700), from seeds 1..--seeds-a with
# A and 1..--seeds-b with B, alternating A B A B, each run on the caller's cores. A measurement,
# never a test:
#   experiments/measure/seed_band.sh BIN_A BIN_B OUT_DIR [--arch transformer|rnn] [--steps N]
#                                    [--seeds-a N] [--seeds-b N] [--threads N] [--set KEY=VALUE ...]
#                                    [--env-a NAME=VALUE ...] [--env-b NAME=VALUE ...]
# --env-a/--env-b set a side's environment: one build against itself with NMTZOO_KERNELS=products
# on side A is the band of the composition before the fused kernels (LibTorch's operators, products
# through oneDNN; NMTZOO_KERNELS=off also sends the products to OpenBLAS, about twice as slow).
# Resumable: a finished run (training_summary.json) is kept, a killed one resumes from its
# checkpoint_last.pt. Two lanes may share OUT_DIR (one a core, e.g. under taskset): each run is
# locked while it trains, and a lane skips the runs another holds.
# Prints each finished run's last greedy val BLEU, A's band (min-max, mean and sample sd) and where
# B's runs fall against it.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
arch=transformer steps=2350 seeds_a=3 seeds_b=2 threads=1
parse_args "arch: steps: seeds-a: seeds-b: threads: set+ env-a+ env-b+" "$@"
expect_args 3
for option in steps seeds_a seeds_b threads; do positive_integer "--${option//_/-}" "${!option}"; done
bin_a="$(cd "${args[0]}" && pwd)"; bin_b="$(cd "${args[1]}" && pwd)"; out="${args[2]}"
environment() {  # SIDE: its --env-a or --env-b values, checked, into side_env_a or side_env_b
  local -n options="env_$1_args" values="side_env_$1"
  local i
  values=()
  for ((i = 1; i < ${#options[@]}; i += 2)); do
    [[ "${options[i]}" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] ||
      usage_error "${options[i-1]} expects NAME=VALUE, got '${options[i]}'"
    values+=("${options[i]}")
  done
}
environment a; environment b  # bad options stop before any training
frozen_bin="$bin_a" prepare_workspace
mkdir -p "$out"
out="$(cd "$out" && pwd)"

train() {  # side seed
  local side=$1 seed=$2 bin="$bin_a"
  [[ $side == b ]] && bin="$bin_b"
  local run_dir="$out/${side}_seed$seed"
  local -n side_env="side_env_$side"
  [[ -f "$run_dir/training_summary.json" ]] && return 0
  local lock
  if ! try_lock "$run_dir.lock"; then
    echo "== build ${side^^} seed $seed: being trained by another lane, skipped"
    return 0
  fi
  local resume=()
  [[ -f "$run_dir/checkpoints/checkpoint_last.pt" ]] && resume=(--resume)
  echo "== build ${side^^} seed $seed ($bin${side_env:+, ${side_env[*]}}): $steps updates${resume:+, resumed}"
  env "${side_env[@]}" "$bin/nmtzoo-train" --config "configs/multi30k_de_en_$arch.yaml" --set training.output_dir="$run_dir" \
    --set training.max_steps="$steps" --set training.max_time=0 --set training.bf16=false \
    --set training.seed="$seed" --set training.threads="$threads" --set training.keep_last=1 \
    "${set_args[@]}" "${resume[@]}" >>"$out/${side}_seed$seed.log" 2>&1 ||
    die "build ${side^^} seed $seed failed; see $out/${side}_seed$seed.log"
  exec {lock}>&-
}

most=$(( seeds_a > seeds_b ? seeds_a : seeds_b ))
for seed in $(seq 1 "$most"); do
  (( seed <= seeds_a )) && train a "$seed"
  (( seed <= seeds_b )) && train b "$seed"
done

/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def last_valid(run):
    valid = [json.loads(l) for l in open(f"{run}/metrics.jsonl") if '"type":"valid"' in l]
    return valid[-1] if valid else None
runs = {"a": [], "b": []}
for run in sorted(glob.glob(f"{out}/[ab]_seed*")):
    if not os.path.isdir(run) or not os.path.exists(f"{run}/training_summary.json"):
        continue
    record = last_valid(run)
    if record is None:
        continue
    side = os.path.basename(run)[0]
    runs[side].append(record["bleu"])
    print(f"{os.path.basename(run)}: val BLEU {record['bleu']:.2f} (greedy) at update {record['step']}")
a, b = runs["a"], runs["b"]
if len(a) < 2 or not b:
    sys.exit(f"band: needs 2+ finished A runs and 1+ B run (have {len(a)} and {len(b)})")
mean, sd = statistics.mean(a), statistics.stdev(a)
print(f"A's band over {len(a)} seeds: {min(a):.2f}-{max(a):.2f}, mean {mean:.2f}, sd {sd:.2f}")
for bleu in b:
    where = "within A's min-max" if min(a) <= bleu <= max(a) else (
        "within A's mean +- 2 sd" if abs(bleu - mean) <= 2 * sd else "OUTSIDE A's band")
    distance = f"{(bleu - mean) / sd:+.1f} sd" if sd > 0 else f"{bleu - mean:+.2f} BLEU"
    print(f"B {bleu:.2f}: {where} ({distance})")
PY
