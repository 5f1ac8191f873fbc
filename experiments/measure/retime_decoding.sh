#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A direction's decoding speeds measured again on a quiet core. The grid decodes its test sets
# while other runs train, so the sentences/s it keeps (TEST.speed.json, the report's sent/s
# columns) carry their load. For each complete system folder of REPORT_DIR
# (reports/multi30k_<src>_<tgt>: a model's, with decoding_checkpoint.txt, or an ensemble's, with
# ensemble.txt), this decodes each kept test output's source again with the apps of BIN, the same
# checkpoint(s) from runs/ and the decoding chosen on val, beam 5, on --threads threads (default
# 1), checks that the output is byte-identical to the kept one, and only then replaces
# TEST.speed.json. A measurement, never a test:
#   experiments/measure/retime_decoding.sh BIN REPORT_DIR [--threads N] [--systems A,B]
# --systems: only these folders of REPORT_DIR (e.g. the systems decoded since the last re-timing).
# Run it pinned (taskset) to a core nothing else runs on, with the BIN the grid decoded with;
# then rebuild the reports (experiments/run_plan.sh PLAN --report, or compare.sh's rerun, which
# keeps complete folders).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
threads=1
systems=""
parse_args "threads: systems:" "$@"
expect_args 2
positive_integer --threads "$threads"
bin="$(cd "${args[0]}" && pwd)"
report="$(cd "${args[1]}" && pwd)"
frozen_bin="$bin" prepare_workspace
# shellcheck source=../lib/model_run.sh
source experiments/lib/model_run.sh
[[ "$(basename "$report")" =~ ^multi30k_([a-z]+)_([a-z]+)$ ]] ||
  die "$report is not a direction's report folder (reports/multi30k_<src>_<tgt>)"
src="${BASH_REMATCH[1]}" tgt="${BASH_REMATCH[2]}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

model_decoding() {  # FOLDER: sets flags to the checkpoint and decoding its val_tuning.tsv chose
  local checkpoint name
  checkpoint="$(cat "$1/decoding_checkpoint.txt")"
  case "$(basename "$checkpoint")" in
    averaged.pt) name=averaged ;;
    checkpoint_best.pt) name=best ;;
    best_averaged.pt) name=best_averaged ;;
    *) die "$1/decoding_checkpoint.txt: unknown checkpoint $checkpoint" ;;
  esac
  # tune_decoding.sh's choice: the best beam-5 row of the chosen checkpoint, the earlier on ties.
  local penalty alpha
  read -r penalty alpha < <(awk -F'\t' -v name="$name" \
    'NR > 1 && $1 == name && $2 == 5 && (choice == "" || $5 > best) { best = $5; choice = $3 " " $4 }
     END { print choice }' "$1/val_tuning.tsv")
  [[ -n "$penalty" ]] || die "$1/val_tuning.tsv has no beam-5 row of $name"
  flags=(-c "$checkpoint" --beam 5 --length-penalty "$penalty" --alpha "$alpha")
}

ensemble_decoding_of() {  # FOLDER: sets flags to ensemble.txt's members and decoding
  local record="$1/ensemble.txt" model path digest
  flags=()
  while read -r model path digest; do  # the members; the last line is the decoding
    # The digest is of the member's training_summary.json: a retrained member has another one.
    [[ "$(sha256sum < "$report/$model/training_summary.json" | cut -d' ' -f1)" == "$digest" ]] ||
      die "$record: member $model was retrained after the ensemble decoded"
    flags+=(-c "$path")
  done < <(head -n -1 "$record")
  ensemble_settings "$(tail -1 "$record")"
  flags+=("${ensemble_decoding[@]}")
}

sentences_per_second() {  # SPEED.json
  sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$1"
}

folders=("$report"/*/)
if [[ -n "$systems" ]]; then
  IFS=, read -ra folders <<< "$systems"
  for i in "${!folders[@]}"; do
    [[ -d "$report/${folders[i]}" ]] || die "--systems: $report has no folder '${folders[i]}'"
    folders[i]="$report/${folders[i]}"
  done
fi
retimed=0
for folder in "${folders[@]}"; do
  folder="${folder%/}"
  if [[ -f "$folder/ensemble.txt" ]]; then
    ensemble_decoding_of "$folder"
  elif [[ -f "$folder/decoding_checkpoint.txt" && -f "$folder/training_summary.json" ]]; then
    model_decoding "$folder"
  else
    continue
  fi
  for hyp in "$folder"/*.hyp; do
    test="$(basename "$hyp" .hyp)"
    "$bin/nmtzoo-translate" "${flags[@]}" -i "data/multi30k/$test.$src.gz" --target-lang "$tgt" \
      --threads "$threads" -o "$scratch/hyp" --stats "$scratch/speed.json" 2>/dev/null
    cmp -s "$scratch/hyp" "$hyp" ||
      die "$(basename "$folder") $test: the output differs from the kept one; its speed is left as it was"
    echo "$(basename "$folder") $test: $(sentences_per_second "$folder/$test.speed.json") ->" \
      "$(sentences_per_second "$scratch/speed.json") sentences/s"
    mv "$scratch/speed.json" "$folder/$test.speed.json"
    retimed=$((retimed + 1))
  done
done
((retimed)) || die "no complete system folder in $report"
echo "retimed $retimed test outputs in $report with $threads thread(s)"
