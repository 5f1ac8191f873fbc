#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The zoo's comparative experiment on Multi30k, end to end, in one command:
#   experiments/compare.sh [--pair de_en|en_de] [--models "transformer rnn rnn_encdec rnn_luong"]
#                          [--seeds N] [--ensemble "transformer rnn"] [--fresh]
#                          [--tests "test_2016_flickr ..."] [--baseline MODEL]
#                          [--config MODEL=FILE ...] [--set MODEL:KEY=VALUE ...]
#                          [--run MODEL=RUN_DIR ...] [--no-report] [--train-only] [--frozen-bin DIR]
# One direction of an experiment plan: experiments/run_plan.sh runs it for each direction of a
# plan file, with the plan's configs (--config; default configs/multi30k_<pair>_<model>.yaml) and
# overrides (--set, for one model's runs: languages, tokenizer, budget, test sets; they are part
# of the recipe a kept folder is checked against). --run gives a model a run folder of its own
# instead of runs/multi30k_<pair>_<model> (a multilingual model, trained once for all its
# directions and decoded in each); --no-report only trains, decodes and scores (no report, no
# ensemble). --train-only only trains (resuming, checking recipes as always); a later run decodes.
# A run another process is training or decoding is skipped: the other models are done, then the
# script exits with status 3 (two runners share a plan's trainings and decodings); without
# --train-only the direction is neither scored nor reported until a run after it.
# --frozen-bin DIR runs every step (training, decoding, scoring, report) with the apps of DIR, a
# frozen copy of build/bin, which then is not rebuilt, so long runs go on while the tree changes.
# For each model: trains from scratch with its config (an interrupted
# run in runs/ is resumed), averages the last 5 checkpoints and the 5 best-validated ones, picks
# on val the checkpoint (an average or the best one) and length penalty
# (experiments/tune_decoding.sh), translates the three test sets with beam 5, draws attention
# heatmaps of the same three test sentences, and keeps all of it in
# reports/multi30k_<pair>/<model>/; then scores every model's outputs (BLEU, chrF2, TER) and
# writes the report (results.md with confidence intervals and paired-bootstrap p-values against
# the Transformer, results.csv, significance.json, SVG plots) from those folders.
# A model whose folder is complete is not retrained: the folders are committed, so a model can be
# added without rerunning the others. --fresh reruns the models.
# --seeds N trains each model N times, with training.seed 1..N (seed k > 1 in runs/..._seed<k> and
# reports/.../<model>_seed<k>/); the report adds every seed's scores, their mean and standard
# deviation, while its other sections use seed 1. --ensemble decodes the test sets with the seed-1
# models named (their checkpoints chosen on val; member weights, combination and length penalty
# chosen on val for the ensemble) and adds their scores and paired-bootstrap p-values against the
# first of them to the report; its folder is kept while its members' folders are. The steps of
# one model are experiments/lib/model_run.sh's, shared with experiments/distill.sh.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
pair=de_en
models="transformer rnn rnn_encdec rnn_luong"
seeds=1
parse_args "pair: models: seeds: ensemble: fresh tests: baseline: config+ set+ run+ no-report train-only frozen-bin:" "$@"
expect_args 0
positive_integer --seeds "$seeds"
[[ -z "$frozen_bin" ]] || frozen_bin="$(realpath "$frozen_bin")"
declare -A model_config model_sets
for model in $models; do model_config[$model]="configs/multi30k_${pair}_${model}.yaml"; done
for ((i = 1; i < ${#config_args[@]}; i += 2)); do
  value="${config_args[i]}"
  [[ "$value" == *=* && -v "model_config[${value%%=*}]" ]] || usage_error "--config expects MODEL=FILE for one of the models ($models), got '$value'"
  model_config[${value%%=*}]="${value#*=}"
done
declare -A model_run_dir  # read by lib/model_run.sh's run_model
for ((i = 1; i < ${#run_args[@]}; i += 2)); do
  value="${run_args[i]}"
  [[ "$value" == *=* && -v "model_config[${value%%=*}]" ]] || usage_error "--run expects MODEL=RUN_DIR for one of the models ($models), got '$value'"
  model_run_dir[${value%%=*}]="${value#*=}"
done
for ((i = 1; i < ${#set_args[@]}; i += 2)); do
  value="${set_args[i]}"
  [[ "$value" == *:*=* && -v "model_config[${value%%:*}]" ]] || usage_error "--set expects MODEL:KEY=VALUE for one of the models ($models), got '$value'"
  model_sets[${value%%:*}]+="${value#*:}"$'\n'
done
test_sets="$tests"  # start_experiment sets tests to Multi30k's test sets
source "$root/experiments/lib/model_run.sh"
start_experiment
[[ -z "$test_sets" ]] || read -ra tests <<< "$test_sets"
bin="$apps"
mkdir -p "$report"
gzip -dc "data/multi30k/test_2016_flickr.$src.gz" | sed -n 1,3p > "$report/attention_sources.txt"
# The folders of every model's seeds (seed_folder), seed by seed, so an interrupted experiment
# has every model's seed 1 (the ensemble's members) first.
folders=()
for ((seed = 1; seed <= seeds; ++seed)); do
  for model in $models; do
    folders+=("$(seed_folder "$model" "$seed")")
  done
done
for folder in "${folders[@]}"; do
  model="${folder%_seed*}"
  seed="${folder#"$model"}"
  mapfile -t overrides < <(printf '%s' "${model_sets[$model]:-}")
  run_model "$folder" "${model_config[$model]}" "${seed#_seed}" "${overrides[@]}"
done
if ((${#busy_folders[@]})); then
  if ((train_only)); then
    echo "$script: $pair: ${busy_folders[*]} left to the process that holds them; the rest is trained" >&2
  else
    echo "$script: $pair is not scored or reported: ${busy_folders[*]} left to the process that holds them; run again once it is done" >&2
  fi
  exit 3
fi
((train_only)) && exit 0
# One process at a time scores the direction and writes its report (two plan runners can reach
# the same direction): it holds a lock on the report's folder.
exec {report_lock}< "$report"
if ! flock -n "$report_lock"; then
  echo "== $pair: another process is writing its report; waiting for it"
  flock "$report_lock"
fi
# Every model's test outputs are scored again, so kept folders get today's metrics too.
for folder in "${folders[@]}"; do score_folder "$folder"; done
((no_report)) && exit 0
# shellcheck disable=SC2086  # $models is a list
"$bin/nmtzoo-report" --out "$report" --models $models --tests "${tests[@]}" \
  --src "$src" --tgt "$tgt" --seeds "$seeds" ${baseline:+--baseline "$baseline"} \
  --title "Multi30k $src→$tgt: ${models// /, }"
{
  echo
  echo "## Decoding choices on val (tuned on val only; the chosen one decodes the test sets)"
  echo
  echo "| model | checkpoint | beam | length penalty | alpha | val BLEU | sentences/s |"
  echo "|---|---|---|---|---|---|---|"
  for folder in "${folders[@]}"; do
    awk -F'\t' -v m="$folder" 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s |\n", m, $1, $2, $3, $4, $5, $6 }' \
      "$report/$folder/val_tuning.tsv"
  done
  echo
  echo "Checkpoints that decoded the test sets (each model's best beam-5 row on val: the average of the last 5, the best checkpoint, or the average of the best 5):"
  echo
  for folder in "${folders[@]}"; do echo "- $folder: \`$(chosen_checkpoint "$folder")\`"; done
} >> "$report/results.md"
if [[ -n "$ensemble" ]]; then
  ensemble_checkpoints "$ensemble"
  folder="$report/ensemble_${ensemble// /+}"
  # ensemble.txt, written last, marks the folder complete: its members (ensemble_members), then
  # the decoding chosen on val. A complete folder whose members are unchanged is kept, so the
  # report is rebuilt without the checkpoints (a fresh clone has none).
  record="$folder/ensemble.txt"
  kept_choice="$(kept_ensemble_choice "$ensemble")"
  if ((fresh)) || [[ -z "$kept_choice" ]]; then
    rm -f "$record"
    ((fresh)) && rm -rf "$folder"  # and a stopped tuning's rows
    mkdir -p "$folder"
    tune_ensemble "$folder/val_tuning.tsv"
    for test in "${tests[@]}"; do
      "$bin/nmtzoo-translate" "${checkpoints[@]}" -i "data/multi30k/$test.$src.gz" \
        -o "$folder/$test.hyp" --target-lang "$tgt" "${ensemble_decoding[@]}" --stats "$folder/$test.speed.json" 2>/dev/null
    done
    { ensemble_members "$ensemble"; echo "$penalty $alpha $weights $mode"; } > "$record.tmp"
    mv "$record.tmp" "$record"
  else
    ensemble_settings "$kept_choice"
    echo "== ensemble ${ensemble// / + }: results kept in $folder (its members are unchanged)"
  fi
  first_member="${ensemble%% *}"
  {
    echo
    echo "## Ensemble of the seed-1 models: ${ensemble// / + }"
    echo
    echo "Each model's seed-1 checkpoint chosen on val (${members[*]}),"
    echo "$ensemble_combination, beam 5, length penalty $penalty (alpha $alpha);"
    echo "weights, combination and length penalty chosen on val for the ensemble. Paired bootstrap"
    echo "(1,000 resamples, seed 12345) against $first_member alone:"
    echo
    echo '```'
  } >> "$report/results.md"
  score_folder "$(basename "$folder")"
  for test in "${tests[@]}"; do
    {
      echo "$test:"
      "$bin/nmtzoo-evaluate" "data/multi30k/$test.$tgt.gz" -i "$report/$first_member/$test.hyp" \
        "$folder/$test.hyp" -m bleu chrf ter --paired-bs -w 2
    } >> "$report/results.md"
  done
  echo '```' >> "$report/results.md"
fi
echo "report: $report/results.md"
