#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Decoding choices tuned on the validation set only (never on a test set):
#   experiments/tune_decoding.sh RUN_DIR SRC TGT OUT.tsv
#   experiments/tune_decoding.sh --ensemble "A.pt B.pt ..." SRC TGT OUT.tsv
# (--frozen-bin DIR: run the apps of DIR, a copy of build/bin, instead)
# Run from the project folder. Translates data/multi30k/val.SRC with the run's last checkpoint,
# its average of the last 5 (RUN_DIR/averaged.pt, made by experiments/compare.sh), greedy and
# beam 5 with several length penalties, the run's best checkpoint by validation BLEU (checkpoints/checkpoint_best.pt) and,
# when the run has one, the average of its 5 best-validated checkpoints (RUN_DIR/best_averaged.pt)
# with beam 5 and the same avg penalties, scores cased sacreBLEU against val.TGT, writes one row
# per setting to OUT.tsv and prints the best beam-5 row of the averaged, best and best-averaged
# checkpoints as "LENGTH_PENALTY ALPHA CHECKPOINT" (a run that overfits late can have its
# averaged last checkpoints below its best ones). Alphas above 1.8 are tried while the largest
# tried is the best (up to 3.0). With --ensemble, the checkpoints decode val as
# one ensemble with beam 5, searched coordinate-wise: the length penalties with equal weights
# averaging probabilities, then at the best penalty the member weights (equal, or one member 1.5x
# or 2x the others, normalized to sum to 1) in both ensemble modes (prob, logprob), then the
# penalties again at the best weights; it prints the best row as
# "LENGTH_PENALTY ALPHA WEIGHTS MODE".
# OUT.tsv appears complete: the rows are written to OUT.tsv.partial, renamed at the end. A tuning
# stopped midway resumes: run again on the same inputs (apps, val files, checkpoints: the same
# paths, sizes and modification times, recorded in OUT.tsv.partial.inputs), it decodes only the
# settings the partial file has no row for.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
parse_args "ensemble: frozen-bin:" "$@"
[[ -n "$ensemble" ]] && args=("" "${args[@]}")  # no run folder
expect_args 4
run="${args[0]}"; src="${args[1]}"; tgt="${args[2]}"; final="${args[3]}"
bin="${frozen_bin:-build/bin}"
val_src="data/multi30k/val.$src.gz"
val_ref="data/multi30k/val.$tgt.gz"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
out="$final.partial"
inputs_record="$out.inputs"

columns=(checkpoint beam length_penalty alpha val_bleu sentences_per_second)
[[ -n "$ensemble" ]] && columns+=(weights mode)
if [[ -n "$ensemble" ]]; then
  read -ra checkpoint_files <<< "$ensemble"
else
  checkpoint_files=("$run/checkpoints/checkpoint_last.pt" "$run/averaged.pt" "$run/checkpoints/checkpoint_best.pt")
  [[ -f "$run/best_averaged.pt" ]] && checkpoint_files+=("$run/best_averaged.pt")
fi
decoding_inputs() {  # one line a file the rows depend on: its path, size and modification time
  stat -L -c '%n %s %y' "$bin/nmtzoo-translate" "$bin/nmtzoo-evaluate" "$val_src" "$val_ref" \
    "${checkpoint_files[@]}"
}

declare -A scored  # "name beam penalty alpha weights mode" of the settings decoded
setting_key() { echo "$1 $2 $3 $4 ${5:-} ${6:-}"; }
if [[ -f "$out" ]] && decoding_inputs 2>/dev/null | cmp -s - "$inputs_record"; then
  # A row cut short by the stop that left the file is dropped (and decoded again).
  awk -F'\t' -v n="${#columns[@]}" 'NR == 1 || NF == n' "$out" > "$scratch/kept"
  cp "$scratch/kept" "$out"
  while IFS=$'\t' read -r name beam penalty alpha _ _ weights mode; do
    scored["$(setting_key "$name" "$beam" "$penalty" "$alpha" "$weights" "$mode")"]=1
  done < <(tail -n +2 "$out")
  echo "$script: resuming $out: ${#scored[@]} settings decoded before" >&2
else
  (IFS=$'\t'; echo "${columns[*]}") > "$out"
  decoding_inputs > "$inputs_record"
fi

score() {  # checkpoint-name "checkpoint [checkpoint ...]" beam penalty alpha [weights mode]
  local key
  key="$(setting_key "$1" "${@:3}")"
  [[ -n "${scored["$key"]:-}" ]] && return  # each setting is decoded once
  scored["$key"]=1
  local name="$1" checkpoints=() beam="$3" penalty="$4" alpha="$5" ensemble_flags=()
  for checkpoint in $2; do checkpoints+=(-c "$checkpoint"); done
  (($# == 7)) && ensemble_flags=(--weights "$6" --ensemble-mode "$7")
  "$bin/nmtzoo-translate" "${checkpoints[@]}" -i "$val_src" -o "$scratch/hyp" --target-lang "$tgt" --beam "$beam" \
    --length-penalty "$penalty" --alpha "$alpha" "${ensemble_flags[@]}" \
    --stats "$scratch/speed.json" 2>/dev/null
  local bleu speed row
  bleu="$("$bin/nmtzoo-evaluate" "$val_ref" -i "$scratch/hyp" -m bleu -b -w 2)"
  speed="$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$scratch/speed.json")"
  printf -v row '%s\t%s\t%s\t%s\t%s\t%.1f' "$name" "$beam" "$penalty" "$alpha" "$bleu" "$speed"
  (($# == 7)) && printf -v row '%s\t%s\t%s' "$row" "$6" "$7"
  printf '%s\n' "$row" >> "$out"  # one write: a stop leaves whole rows
}
finish() {  # OUT.tsv complete
  mv "$out" "$final"
  rm -f "$inputs_record"
  out="$final"
}

# The avg penalty's alphas go beyond 1.8 in steps of 0.4, up to 3.0, while the largest one tried
# is the best of its checkpoint (and ensemble weights and mode): a search that stops at the grid's
# edge can miss the optimum.
next_alpha() {  # NAME [WEIGHTS MODE]: the next alpha to try, or nothing
  awk -F'\t' -v name="$1" -v weights="${2:-}" -v mode="${3:-}" '
    NR > 1 && $1 == name && $2 == 5 && $3 == "avg" &&
    (weights == "" || ($7 == weights && $8 == mode)) {
      alpha = $4 + 0; bleu[alpha] = $5 + 0; if (alpha > top) top = alpha
    }
    END {
      for (alpha in bleu) if (alpha + 0 != top && bleu[alpha] >= bleu[top]) exit
      if (top >= 1.8 && top < 2.95) printf "%.1f\n", top + 0.4
    }' "$out"
}
# Beam 5 with no penalty and the avg alphas 0.6-1.8, extended past 1.8 by next_alpha.
sweep_penalties() {  # NAME "CHECKPOINT [CHECKPOINT ...]" [WEIGHTS MODE]
  score "$1" "$2" 5 none 0 "${@:3}"
  local alpha
  for alpha in 0.6 1.0 1.4 1.8; do score "$1" "$2" 5 avg "$alpha" "${@:3}"; done
  while alpha="$(next_alpha "$1" "${@:3}")" && [[ -n "$alpha" ]]; do
    score "$1" "$2" 5 avg "$alpha" "${@:3}"
  done
}

if [[ -n "$ensemble" ]]; then
  mapfile -t weight_grid < <(awk -v n="${#checkpoint_files[@]}" '
    function emit(favoured, ratio,   total, j, line) {
      total = favoured ? n - 1 + ratio : n
      for (j = 1; j <= n; j++)
        line = line (j > 1 ? "," : "") sprintf("%.4g", (j == favoured ? ratio : 1) / total)
      print line
    }
    BEGIN { emit(0, 1); if (n > 1) for (i = 1; i <= n; i++) { emit(i, 1.5); emit(i, 2) } }')
  best() {  # the best row so far as "penalty alpha weights mode"; ties keep the earlier row
    awk -F'\t' 'NR > 1 && $5 > best { best = $5; choice = $3 " " $4 " " $7 " " $8 }
                 END { print choice }' "$out"
  }
  sweep_penalties ensemble "$ensemble" "${weight_grid[0]}" prob
  read -r penalty alpha weights mode < <(best)
  for weights in "${weight_grid[@]}"; do
    for mode in prob logprob; do
      score ensemble "$ensemble" 5 "$penalty" "$alpha" "$weights" "$mode"
    done
  done
  read -r penalty alpha weights mode < <(best)
  sweep_penalties ensemble "$ensemble" "$weights" "$mode"
  finish
  best
  exit 0
fi
score last "$run/checkpoints/checkpoint_last.pt" 1 none 0
score last "$run/checkpoints/checkpoint_last.pt" 5 avg 1.0
score averaged "$run/averaged.pt" 1 none 0
sweep_penalties averaged "$run/averaged.pt"
score averaged "$run/averaged.pt" 5 wu 1.0
candidates=(averaged "$run/averaged.pt" best "$run/checkpoints/checkpoint_best.pt")
[[ -f "$run/best_averaged.pt" ]] && candidates+=(best_averaged "$run/best_averaged.pt")
for ((i = 2; i < ${#candidates[@]}; i += 2)); do
  sweep_penalties "${candidates[i]}" "${candidates[i + 1]}"
done
finish
# Best beam-5 row of the candidates; ties keep the earlier row (the averaged checkpoint, then the
# simpler setting).
awk -F'\t' -v paths="${candidates[*]}" \
  'BEGIN { n = split(paths, item, " "); for (i = 1; i < n; i += 2) path[item[i]] = item[i + 1] }
   NR > 1 && ($1 in path) && $2 == 5 && $5 > best { best = $5; choice = $3 " " $4 " " path[$1] }
   END { print choice }' "$out"
