#!/usr/bin/env bash
# Decoding choices tuned on the validation set only (never on a test set):
#   scripts/tune_decoding.sh RUN_DIR SRC TGT OUT.tsv
#   scripts/tune_decoding.sh --ensemble "A.pt B.pt ..." SRC TGT OUT.tsv
# Translates data/multi30k/val.SRC with the run's last checkpoint, its average of the last 5
# (RUN_DIR/averaged.pt, made by scripts/compare.sh), greedy and beam 5 with several length
# penalties, the run's best checkpoint by validation BLEU (checkpoints/checkpoint_best.pt) and,
# when the run has one, the average of its 5 best-validated checkpoints (RUN_DIR/best_averaged.pt)
# with beam 5 and the same avg penalties, scores cased sacreBLEU against val.TGT, writes one row
# per setting to OUT.tsv and prints the best beam-5 row of the averaged, best and best-averaged
# checkpoints as "LENGTH_PENALTY ALPHA CHECKPOINT" (a run that overfits late can have its
# averaged last checkpoints below its best ones). With --ensemble, the beam-5 settings of the checkpoints
# decoding as one ensemble, and the best of those as "LENGTH_PENALTY ALPHA".
set -euo pipefail
ensemble=""
if [[ "${1:-}" == --ensemble ]]; then
  ensemble="$2"
  shift 2
fi
[[ -n "$ensemble" ]] && set -- "" "$@"  # no run folder
(($# == 4)) || { sed -n '2,12p' "$0"; exit 2; }
run="$1"; src="$2"; tgt="$3"; out="$4"
bin=build/bin
val_src="data/multi30k/val.$src.gz"
val_ref="data/multi30k/val.$tgt.gz"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

printf 'checkpoint\tbeam\tlength_penalty\talpha\tval_bleu\tsentences_per_second\n' > "$out"
score() {  # checkpoint-name "checkpoint [checkpoint ...]" beam penalty alpha
  local name="$1" checkpoints=() beam="$3" penalty="$4" alpha="$5"
  for checkpoint in $2; do checkpoints+=(-c "$checkpoint"); done
  "$bin/nmtzoo-translate" "${checkpoints[@]}" -i "$val_src" -o "$scratch/hyp" --beam "$beam" \
    --length-penalty "$penalty" --alpha "$alpha" --stats "$scratch/speed.json" 2>/dev/null
  local bleu speed
  bleu="$("$bin/nmtzoo-evaluate" "$val_ref" -i "$scratch/hyp" -m bleu -b -w 2)"
  speed="$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$scratch/speed.json")"
  printf '%s\t%s\t%s\t%s\t%s\t%.1f\n' "$name" "$beam" "$penalty" "$alpha" "$bleu" "$speed" >> "$out"
}

if [[ -n "$ensemble" ]]; then
  score ensemble "$ensemble" 5 none 0
  for alpha in 0.6 1.0 1.4 1.8; do score ensemble "$ensemble" 5 avg "$alpha"; done
  # Best beam-5 row; ties keep the earlier (simpler) setting.
  awk -F'\t' 'NR > 1 && $2 == 5 && $5 > best { best = $5; choice = $3 " " $4 } END { print choice }' "$out"
  exit 0
fi
score last "$run/checkpoints/checkpoint_last.pt" 1 none 0
score last "$run/checkpoints/checkpoint_last.pt" 5 avg 1.0
score averaged "$run/averaged.pt" 1 none 0
score averaged "$run/averaged.pt" 5 none 0
for alpha in 0.6 1.0 1.4 1.8; do score averaged "$run/averaged.pt" 5 avg "$alpha"; done
score averaged "$run/averaged.pt" 5 wu 1.0
candidates=(averaged "$run/averaged.pt" best "$run/checkpoints/checkpoint_best.pt")
[[ -f "$run/best_averaged.pt" ]] && candidates+=(best_averaged "$run/best_averaged.pt")
for ((i = 2; i < ${#candidates[@]}; i += 2)); do
  score "${candidates[i]}" "${candidates[i + 1]}" 5 none 0
  for alpha in 0.6 1.0 1.4 1.8; do score "${candidates[i]}" "${candidates[i + 1]}" 5 avg "$alpha"; done
done
# Best beam-5 row of the candidates; ties keep the earlier row (the averaged checkpoint, then the
# simpler setting).
awk -F'\t' -v paths="${candidates[*]}" \
  'BEGIN { n = split(paths, item, " "); for (i = 1; i < n; i += 2) path[item[i]] = item[i + 1] }
   NR > 1 && ($1 in path) && $2 == 5 && $5 > best { best = $5; choice = $3 " " $4 " " path[$1] }
   END { print choice }' "$out"
