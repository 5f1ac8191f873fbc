#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Trains the four zoo architectures of experiments/compare.sh (de->en) for a short budget each,
# as the members of the ensembles measured in docs/decoding.md (nmtzoo-translate -c A -c B ...):
#   experiments/train_ensemble_members.sh [--minutes 15] [--threads 1] [--models "transformer rnn ..."]
# Runs go to runs/ensemble<minutes>/<model>; an interrupted run is resumed, a finished one kept.
# One thread each by default, so the other core stays free on a 2-core machine.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
minutes=15
threads=1
models="transformer rnn rnn_encdec rnn_luong"
parse_args "minutes: threads: models:" "$@"
expect_args 0
prepare_workspace
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
