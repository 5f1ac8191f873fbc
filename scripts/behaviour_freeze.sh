#!/usr/bin/env bash
# Checks that a change of structure changed no behaviour: two builds of nmtzoo (BEFORE and AFTER,
# their bin/ folders) train the Transformer and the Bahdanau RNN for 50 updates on Multi30k from
# the same seed, and translate test_2016_flickr greedily and with beam 5. Identical means:
#   - every logged training loss (full precision, metrics.jsonl, one record per update) equal;
#   - the translations of each build's own checkpoint equal;
#   - AFTER translating the checkpoints BEFORE wrote gives the same lines (old checkpoints load).
#
#   scripts/behaviour_freeze.sh BEFORE_BIN AFTER_BIN WORK_DIR
#
# BEFORE's outputs are kept in WORK_DIR/before and reused when complete (delete it to redo).
# Exit status 0 when everything is identical, 1 otherwise (the differences are printed).
set -euo pipefail
if [[ $# -ne 3 ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
before_bin="$(cd "$1" && pwd)"
after_bin="$(cd "$2" && pwd)"
mkdir -p "$3"
work="$(cd "$3" && pwd)"
data="$root/data/multi30k"
[[ -f "$data/train.de.gz" ]] || source "$root/scripts/data-dir.sh"
archs=(transformer rnn)
steps=50
threads=2

config_of() {
  case "$1" in
    transformer) echo "$root/configs/multi30k_de_en_transformer.yaml" ;;
    rnn) echo "$root/configs/multi30k_de_en_rnn.yaml" ;;
  esac
}

# run BIN OUT: trains each arch and translates with its checkpoint.
run() {
  local bin="$1" out="$2"
  mkdir -p "$out"
  for arch in "${archs[@]}"; do
    local run_dir="$out/$arch"
    rm -rf "$run_dir"
    "$bin/nmtzoo-train" --config "$(config_of "$arch")" \
      --set data.dir="$data" --set tokenizer.prefix="$work/spm" \
      --set training.output_dir="$run_dir" --set training.max_steps=$steps \
      --set training.log_every=1 --set training.valid_every=0 --set training.valid_bleu=false \
      --set training.best_metric=loss --set training.threads=$threads --set training.seed=7 \
      --set training.max_time=0 >"$out/$arch.train.log" 2>&1
    # type, step and loss of every train record, as written (17 significant digits).
    grep '"type":"train"' "$run_dir/metrics.jsonl" |
      sed -E 's/.*"loss":([^,}]*).*"step":([0-9]+).*/\2 \1/' >"$out/$arch.losses"
    translate "$bin" "$run_dir/checkpoints/checkpoint_last.pt" "$out/$arch"
  done
}

# translate BIN CHECKPOINT PREFIX: PREFIX.greedy and PREFIX.beam5 for test_2016_flickr.
translate() {
  local bin="$1" checkpoint="$2" prefix="$3"
  for beam in 1 5; do
    local name=greedy
    [[ $beam == 5 ]] && name=beam5
    "$bin/nmtzoo-translate" -c "$checkpoint" -i "$data/test_2016_flickr.de.gz" -o "$prefix.$name" \
      --beam $beam --threads $threads --device cpu 2>>"$prefix.translate.log"
  done
}

if [[ ! -f "$work/before/done" ]]; then
  echo "behaviour_freeze: running BEFORE ($before_bin)"
  run "$before_bin" "$work/before"
  touch "$work/before/done"
fi
echo "behaviour_freeze: running AFTER ($after_bin)"
run "$after_bin" "$work/after"
for arch in "${archs[@]}"; do
  translate "$after_bin" "$work/before/$arch/checkpoints/checkpoint_last.pt" "$work/after/$arch.old_checkpoint"
done

status=0
compare() {
  local what="$1" a="$2" b="$3"
  if cmp -s "$a" "$b"; then
    echo "identical  $what ($(wc -l <"$a") lines)"
  else
    echo "DIFFERENT  $what"
    diff "$a" "$b" | head -10
    status=1
  fi
}
for arch in "${archs[@]}"; do
  [[ $(wc -l <"$work/before/$arch.losses") -eq $steps ]] || { echo "missing losses for $arch"; status=1; }
  compare "$arch: training losses of $steps updates" "$work/before/$arch.losses" "$work/after/$arch.losses"
  for name in greedy beam5; do
    compare "$arch: test_2016_flickr $name, own checkpoint" "$work/before/$arch.$name" "$work/after/$arch.$name"
    compare "$arch: test_2016_flickr $name, BEFORE's checkpoint read by AFTER" \
      "$work/before/$arch.$name" "$work/after/$arch.old_checkpoint.$name"
  done
done
exit $status
