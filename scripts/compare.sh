#!/usr/bin/env bash
# The zoo's comparative experiment on Multi30k, end to end, in one command:
#   scripts/compare.sh [--pair de_en|en_de] [--models "transformer rnn rnn_encdec rnn_luong"] [--fresh]
# For each model: trains from scratch with configs/multi30k_<pair>_<model>.yaml (an interrupted
# run in runs/ is resumed), averages the last 5 checkpoints, picks the length penalty on val
# (scripts/tune_decoding.sh), translates the three test sets with beam 5, draws attention
# heatmaps of the same three test sentences, and keeps all of it in reports/multi30k_<pair>/<model>/;
# then scores every model's outputs (BLEU, chrF2, TER) and writes the report (results.md with
# confidence intervals and paired-bootstrap p-values against the Transformer, results.csv,
# significance.json, SVG plots) from those folders. A model whose folder is complete is not retrained (the folders are
# committed, so a model can be added without rerunning the others); --fresh reruns the models.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pair=de_en
models="transformer rnn rnn_encdec rnn_luong"
fresh=0
while (($#)); do
  case "$1" in
    --pair) pair="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
src="${pair%_*}"
tgt="${pair#*_}"
tests=(test_2016_flickr test_2017_flickr test_2017_mscoco)

source "$root/scripts/data-dir.sh"
"$root/scripts/build.sh" >/dev/null
cd "$root"
bin=build/bin
report="reports/multi30k_$pair"
mkdir -p "$report"
gzip -dc "data/multi30k/test_2016_flickr.$src.gz" | sed -n 1,3p > "$report/attention_sources.txt"
for model in $models; do
  config="configs/multi30k_${pair}_${model}.yaml"
  run="runs/multi30k_${pair}_${model}"
  results="$report/$model"
  [[ -f "$config" ]] || { echo "compare.sh: missing $config" >&2; exit 1; }
  if ((fresh)); then rm -rf "$run" "$results"; fi
  # training_summary.json is copied into the model's folder last: it marks the folder complete.
  if [[ -f "$results/training_summary.json" ]]; then
    echo "== $model: results kept in $results (--fresh reruns it)"
    continue
  fi
  if [[ ! -f "$run/training_summary.json" ]]; then
    resume=()
    [[ -f "$run/checkpoints/checkpoint_last.pt" ]] && resume=(--resume)
    echo "== training $model ($config), log in $run.log"
    mkdir -p "$run"
    "$bin/nmtzoo-train" --config "$config" "${resume[@]}" 2>&1 | tee -a "$run.log" | grep --line-buffered -E "^valid|reached|stopping" || true
    [[ -f "$run/training_summary.json" ]] || { echo "compare.sh: training $model did not finish" >&2; exit 1; }
  fi
  mkdir -p "$results"
  "$bin/nmtzoo-average" --dir "$run/checkpoints" --last 5 -o "$run/averaged.pt"
  read -r penalty alpha < <(scripts/tune_decoding.sh "$run" "$src" "$tgt" "$results/val_tuning.tsv")
  echo "$model: length penalty chosen on val: $penalty, alpha $alpha"
  for test in "${tests[@]}"; do
    "$bin/nmtzoo-translate" -c "$run/averaged.pt" -i "data/multi30k/$test.$src.gz" \
      -o "$results/$test.hyp" --beam 5 --length-penalty "$penalty" --alpha "$alpha" \
      --stats "$results/$test.speed.json" 2>/dev/null
  done
  "$bin/nmtzoo-translate" -c "$run/averaged.pt" -i "$report/attention_sources.txt" --beam 5 \
    --attention-svg "$results/attention" --attention-count 3 >/dev/null 2>&1
  cp "$run/metrics.jsonl" "$results/metrics.jsonl"
  cp "$run/training_summary.json" "$results/training_summary.json"
done
# Every model's test outputs are scored again, so kept folders get today's metrics too.
for model in $models; do
  for test in "${tests[@]}"; do
    scores="$report/$model/$test.scores.json"
    "$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$model/$test.hyp" \
      -m bleu chrf ter -w 2 --json > "$scores.tmp" && mv "$scores.tmp" "$scores"
    echo "$model $test: $("$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$model/$test.hyp" -m bleu chrf ter -w 2 | tr '\n' ' ')"
  done
done
# shellcheck disable=SC2086  # $models is a list
"$bin/nmtzoo-report" --out "$report" --models $models --tests "${tests[@]}" \
  --src "$src" --tgt "$tgt" \
  --title "Multi30k $src→$tgt: the attention RNN (Bahdanau et al. 2015), its no-attention and Luong variants, and the Transformer (Vaswani et al. 2017)"
{
  echo
  echo "## Decoding choices on val (tuned on val only; the chosen one decodes the test sets)"
  echo
  echo "| model | checkpoint | beam | length penalty | alpha | val BLEU | sentences/s |"
  echo "|---|---|---|---|---|---|---|"
  for model in $models; do
    awk -F'\t' -v m="$model" 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s |\n", m, $1, $2, $3, $4, $5, $6 }' \
      "$report/$model/val_tuning.tsv"
  done
} >> "$report/results.md"
echo "report: $report/results.md"
