#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kill trial: trains a tiny model on a synthetic task, saving after every update, and kills the
# trainer with SIGKILL at random instants (often mid-save) N times, resuming each time. After
# every kill, checkpoint_last.pt must load and translate, and the next --resume must start.
#   experiments/measure/kill_trial.sh [N=50] [WORK_DIR]   (from a build: $NMTZOO_BUILD_DIR or build/)
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 0 2
bin="${NMTZOO_BUILD_DIR:-$root/build}/bin"
trials="${args[0]:-50}"
work="${args[1]:-$(mktemp -d /tmp/nmtzoo_kill_trial.XXXXXX)}"
mkdir -p "$work/data"
cd "$work"

words=(alpha bravo charlie delta echo foxtrot golf hotel india juliet)
make_split() {  # name pairs seed: source sentences and their word-reversed targets
  RANDOM=$3
  : > "data/$1.src"; : > "data/$1.tgt"
  for ((i = 0; i < $2; i++)); do
    n=$((2 + RANDOM % 5)); src=(); tgt=()
    for ((w = 0; w < n; w++)); do src+=("${words[RANDOM % 10]}"); done
    for ((w = n - 1; w >= 0; w--)); do tgt+=("${src[w]}"); done
    echo "${src[*]}" >> "data/$1.src"; echo "${tgt[*]}" >> "data/$1.tgt"
  done
}
make_split train 400 1; make_split valid 40 2; make_split test 30 3

cat > run.yaml <<YAML
data: {dir: data, src_lang: src, tgt_lang: tgt, train: train, valid: valid, test: [test], max_len: 40}
tokenizer: {vocab_size: 40, prefix: runs/spm}
model: {arch: transformer, d_model: 64, heads: 2, ffn_dim: 128, encoder_layers: 2, decoder_layers: 2, dropout: 0.0, max_positions: 64}
training: {output_dir: runs/kill, device: cpu, threads: 1, max_tokens: 400, lr: 0.003, warmup_steps: 50, valid_every: 1, valid_bleu: false, best_metric: loss, log_every: 1000, max_steps: 1000000}
YAML

checkpoint=runs/kill/checkpoints/checkpoint_last.pt
survived=0
mid_save=0
for ((trial = 1; trial <= trials; trial++)); do
  resume=(); [[ -f "$checkpoint" ]] && resume=(--resume)
  "$bin/nmtzoo-train" --config run.yaml "${resume[@]}" > "train.log" 2>&1 &
  pid=$!
  until [[ -f "$checkpoint" ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  # A random instant within the next ~1.5 s of training (many saves of ~1 MB each).
  sleep "$(printf '0.%03d' $((RANDOM % 1000)))"; sleep "$(printf '0.%03d' $((RANDOM % 500)))"
  if ! kill -KILL "$pid" 2>/dev/null; then
    echo "trial $trial: the trainer ended before the kill:"; tail -3 train.log; exit 1
  fi
  wait "$pid" 2>/dev/null || true
  [[ -n $(find runs -name '.*.tmp.*' -print -quit) ]] && mid_save=$((mid_save + 1))
  if echo "alpha bravo" | "$bin/nmtzoo-translate" -c "$checkpoint" --threads 1 > translate.out 2> translate.err \
      && [[ $(wc -l < translate.out) -eq 1 ]]; then
    survived=$((survived + 1))
  else
    echo "trial $trial: checkpoint_last.pt does not translate:"; cat translate.err
  fi
done
step=$("$bin/nmtzoo-train" --config run.yaml --resume --set training.max_steps=1 2>&1 | grep -o 'resumed from [^ ]* at step [0-9]*' || true)
leftovers=$(find runs -name '*.tmp.*' | wc -l)
echo "kill trial: $trials SIGKILLs ($mid_save mid-save, leaving partial files), $survived left a" \
     "checkpoint that loads and translates; last resume: ${step:-none}; partial files left after" \
     "that resume: $leftovers"
[[ $survived -eq $trials && -n "$step" && $leftovers -eq 0 ]]
