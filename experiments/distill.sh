#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sequence-level knowledge distillation (Kim & Rush 2016) from experiments/compare.sh's seed-1
# ensemble into one model, for ensemble quality at one model's decoding cost:
#   experiments/distill.sh [--pair de_en] [--teachers "transformer rnn"] [--student transformer] [--fresh]
# 1. The teachers (each model's seed-1 checkpoint chosen on val by compare.sh) translate the
#    training source as one ensemble, beam 5, with the weights, combination and length penalty
#    chosen on val: those translations are the student's targets (data/multi30k_distilled_<pair>/;
#    its val and test sets are the real ones, so validation and scores use human references).
# 2. The student trains on them with configs/multi30k_<pair>_<student>.yaml's recipe and budget,
#    only data.dir changed, and is decoded and scored as compare.sh's models are, in
#    reports/multi30k_<pair>/<student>_distilled/.
# 3. reports/multi30k_<pair>/distillation.md sets it beside the same architecture trained on the
#    real targets (seed 1) and the ensemble: scores, paired bootstrap against the former, and
#    beam-5 decoding speed.
# Every step resumes: kept distilled targets and complete folders are not made again (--fresh
# remakes them).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
pair=de_en
teachers="transformer rnn"
student=transformer
parse_args "pair: teachers: student: fresh" "$@"
expect_args 0
source "$root/experiments/lib/model_run.sh"
start_experiment
bin=build/bin
ensemble_folder="ensemble_${teachers// /+}"
for teacher in $teachers; do
  [[ -f "$(chosen_checkpoint "$teacher")" ]] || {
    die "no $(chosen_checkpoint "$teacher"); train the teachers with" \
      "experiments/compare.sh --models \"$teachers\" --ensemble \"$teachers\" first"
  }
done
[[ -f "$report/$ensemble_folder/test_2016_flickr.hyp" && -f "$report/$student/test_2016_flickr.hyp" ]] || {
  die "$report/$ensemble_folder/ and $report/$student/ are compared against; run" \
    "experiments/compare.sh --models \"$teachers\" --ensemble \"$teachers\" first"
}
[[ -f "$report/attention_sources.txt" ]] ||
  gzip -dc "data/multi30k/test_2016_flickr.$src.gz" | sed -n 1,3p > "$report/attention_sources.txt"

# 1. The distilled corpus.
data="data/multi30k_distilled_$pair"
targets="$data/train.$tgt.gz"
teacher_choice="$report/${student}_distilled_teacher_val_tuning.tsv"
# compare.sh's choice for this ensemble when its folder is kept; tuned on val here otherwise
kept_choice="$(kept_ensemble_choice "$teachers")"
[[ -n "$kept_choice" ]] && teacher_choice="$report/$ensemble_folder/val_tuning.tsv"
if ((fresh)); then rm -rf "$data"; fi
mkdir -p "$data"
for file in data/multi30k/*.gz; do
  name="$(basename "$file")"
  [[ "$name" == "train.$tgt.gz" || -e "$data/$name" ]] || ln -s "../multi30k/$name" "$data/$name"
done
if [[ ! -f "$targets" ]]; then
  ensemble_checkpoints "$teachers"
  if [[ -n "$kept_choice" ]]; then ensemble_settings "$kept_choice"; else tune_ensemble "$teacher_choice"; fi
  echo "== distilling: ${teachers// / + } translate train.$src (beam 5, length penalty $penalty," \
    "alpha $alpha, $ensemble_combination)"
  "$bin/nmtzoo-translate" "${checkpoints[@]}" -i "data/multi30k/train.$src.gz" -o "$data/train.$tgt.tmp" \
    "${ensemble_decoding[@]}" --stats "$data/distillation.speed.json"
  sources=$(gzip -dc "data/multi30k/train.$src.gz" | wc -l)
  translations=$(wc -l < "$data/train.$tgt.tmp")
  ((sources == translations)) || die "$data/train.$tgt.tmp has $translations lines for $sources sources"
  gzip -c "$data/train.$tgt.tmp" > "$targets.tmp" && mv "$targets.tmp" "$targets"
  rm -f "$data/train.$tgt.tmp"
fi

# 2. The student.
folder="${student}_distilled"
run_model "$folder" "configs/multi30k_${pair}_${student}.yaml" "" "data.dir=$data"
score_folder "$folder"

# 3. The comparison.
out="$report/distillation.md"
{
  echo "# Sequence-level knowledge distillation (Kim & Rush 2016), Multi30k $src→$tgt"
  echo
  echo "The seed-1 ensemble ${teachers// / + } (checkpoints chosen on val, beam 5, weights,"
  echo "combination and length penalty chosen on val: \`${teacher_choice#"$report/"}\`) translated the $(gzip -dc "$targets" | wc -l)"
  echo "training sources; a $student trained on those translations alone, with"
  echo "\`configs/multi30k_${pair}_${student}.yaml\`'s recipe and budget (only \`data.dir\` differs), then"
  echo "decoded like the others (checkpoint and length penalty chosen on val)."
  echo "Distilling took $(/usr/bin/env python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print("%.0f s (%.1f sentences/s, %d threads)" % (s["seconds"], s["sentences_per_second"], s["threads"]))' "$data/distillation.speed.json")."
  echo
  echo "| system | parameters | updates | test_2016_flickr BLEU / chrF2 / TER | test_2017_flickr | test_2017_mscoco | beam-5 sentences/s (test_2016_flickr) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  /usr/bin/env python3 - "$report" "${tests[*]}" "$student" "$folder" "$ensemble_folder" <<'PY'
import json, os, sys
report, tests, *folders = sys.argv[1:]
tests = tests.split()
for folder in folders:
    path = os.path.join(report, folder)
    summary_path = os.path.join(path, "training_summary.json")
    params, updates = "—", "—"
    if os.path.exists(summary_path):
        summary = json.load(open(summary_path))
        params, updates = f"{summary['parameters'] / 1e6:.2f}M", f"{summary['updates']:,}"
    cells = []
    for test in tests:
        by_name = {s["name"]: s["score"]
                   for s in json.load(open(os.path.join(path, f"{test}.scores.json")))}
        cells.append(" / ".join(f"{by_name[m]:.2f}" for m in ("BLEU", "chrF2", "TER")))
    speed = json.load(open(os.path.join(path, f"{tests[0]}.speed.json")))["sentences_per_second"]
    print(f"| {folder} | {params} | {updates} | " + " | ".join(cells) + f" | {speed:.1f} |")
PY
  echo
  echo "Paired bootstrap (1,000 resamples, seed 12345) against $student trained on the real targets:"
  echo
  echo '```'
  for test in "${tests[@]}"; do
    echo "$test:"
    "$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$student/$test.hyp" \
      "$report/$folder/$test.hyp" "$report/$ensemble_folder/$test.hyp" -m bleu chrf ter --paired-bs -w 2
  done
  echo '```'
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "report: $out"
