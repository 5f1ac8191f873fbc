#!/usr/bin/env bash
# Trains the four zoo architectures of scripts/compare.sh (de->en) for a short budget each, as the
# members of the ensembles measured in README "Decoding" (nmtzoo-translate -c A -c B ...):
#   scripts/train_ensemble_members.sh [--minutes 15] [--threads 1] [--models "transformer rnn ..."]
# Runs go to runs/ensemble<minutes>/<model>; an interrupted run is resumed, a finished one kept.
# One thread each by default, so the other core stays free on a 2-core machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
minutes=15
threads=1
models="transformer rnn rnn_encdec rnn_luong"
while (($#)); do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "train_ensemble_members.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$root/scripts/data-dir.sh"
"$root/scripts/build.sh" >/dev/null
cd "$root"
for model in $models; do
  run="runs/ensemble${minutes}/$model"
  [[ -f "$run/training_summary.json" ]] && { echo "== $model: kept ($run)"; continue; }
  resume=()
  [[ -f "$run/checkpoints/checkpoint_last.pt" ]] && resume=(--resume)
  mkdir -p "$run"
  echo "== training $model for ${minutes} minutes on $threads thread(s), log in $run/train.log"
  build/bin/nmtzoo-train --config "configs/multi30k_de_en_${model}.yaml" "${resume[@]}" \
    --set "training.max_time=${minutes}m" "training.output_dir=$run" "training.threads=$threads" \
    >>"$run/train.log" 2>&1
done
