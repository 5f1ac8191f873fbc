#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The decoding-breadth measurements of docs/decoding.md, on Multi30k de->en with the models of
# experiments/train_ensemble_members.sh (runs/ensemble<minutes>/<model>):
#   experiments/measure/decoding.sh [--minutes 15] [--threads 2] [--out reports/decoding]
# 1. Ensembles on the three test sets: each model alone, every pair and all four (beam 5,
#    --ensemble-mode prob, equal weights), scored with BLEU, chrF2 and TER with paired bootstrap
#    against the Transformer, and their decoding speed.
#    The Transformer + RNN pair again with its weight chosen on val, and with --ensemble-mode logprob.
# 2. Lexical constraints on test_2016_flickr: 1-2 phrases per sentence from the reference (constraint_phrases.py,
#    seed 1): the share of constraints met, BLEU and speed of plain and constrained beam 5 and 10.
# 3. Speeds of plain, ensemble and constrained beam search side by side, in two interleaved rounds.
# Writes OUT/ensembles.txt, OUT/pair_weights_val.tsv, OUT/pair_variants.txt, OUT/constraints.tsv, OUT/speed.tsv (each run) and OUT/speed_ab.tsv
# (the interleaved rounds); translations stay in runs/.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
minutes=15
threads=2
out=reports/decoding
parse_args "minutes: threads: out:" "$@"
expect_args 0
prepare_workspace
bin=build/bin
models=(transformer rnn rnn_encdec rnn_luong)
runs="runs/ensemble${minutes}"
work="$runs/measurements"
mkdir -p "$work" "$out"
tests=(test_2016_flickr test_2017_flickr test_2017_mscoco)
src=data/multi30k/test_2016_flickr.de.gz
ref=data/multi30k/test_2016_flickr.en.gz
for m in "${models[@]}"; do
  [[ -f "$runs/$m/training_summary.json" ]] || die "$runs/$m is not trained (experiments/train_ensemble_members.sh)"
done
checkpoint() { echo "$runs/$1/checkpoints/checkpoint_best.pt"; }
printf 'system\tmodels\tsearch\tsentences_per_second\ttokens_per_second\n' > "$out/speed.tsv"
translate() {  # name input extra-args...
  local name="$1" input="$2"; shift 2
  if [[ ! -s "$work/$name.json" ]]; then
    "$bin/nmtzoo-translate" -i "$input" -o "$work/$name.hyp" --threads "$threads" --quiet \
      --stats "$work/$name.json" "$@"
  fi
  local models sps tps
  models="$(sed -nE 's/.*"models": *([0-9]+).*/\1/p' "$work/$name.json")"
  sps="$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$work/$name.json")"
  tps="$(sed -nE 's/.*"tokens_per_second": *([0-9.]+).*/\1/p' "$work/$name.json")"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$models" "$SEARCH" "$sps" "$tps" >> "$out/speed.tsv"
}

# 1. Ensembles, on each test set.
SEARCH="beam 5"
all="$(IFS=+; echo "${models[*]}")"
: > "$out/ensembles.txt"
for test in "${tests[@]}"; do
  input="data/multi30k/$test.de.gz"
  systems=()
  for m in "${models[@]}"; do
    translate "$test.$m" "$input" -c "$(checkpoint "$m")" --beam 5
    systems+=("$work/$test.$m.hyp")
  done
  for ((i = 0; i < ${#models[@]}; ++i)); do
    for ((j = i + 1; j < ${#models[@]}; ++j)); do
      a="${models[i]}" b="${models[j]}"
      translate "$test.$a+$b" "$input" -c "$(checkpoint "$a")" -c "$(checkpoint "$b")" --beam 5
      systems+=("$work/$test.$a+$b.hyp")
    done
  done
  translate "$test.$all" "$input" -c "$(checkpoint transformer)" -c "$(checkpoint rnn)" \
    -c "$(checkpoint rnn_encdec)" -c "$(checkpoint rnn_luong)" --beam 5
  systems+=("$work/$test.$all.hyp")
  echo "== $test" >> "$out/ensembles.txt"
  SACREBLEU_FORMAT=text "$bin/nmtzoo-evaluate" "data/multi30k/$test.en.gz" -i "${systems[@]}" \
    -m bleu chrf ter --paired-bs >> "$out/ensembles.txt"
done

# 1b. The Transformer + RNN pair with its weight chosen on val (never on a test set), and with
#     Marian's rule (--ensemble-mode logprob) at equal weights.
printf 'transformer_weight\tval_BLEU\n' > "$out/pair_weights_val.tsv"
best_weight=0.5 best_bleu=-1
for weight in 0.5 0.6 0.7 0.8; do
  SEARCH="beam 5, weights $weight"
  translate "val.transformer+rnn.w$weight" data/multi30k/val.de.gz -c "$(checkpoint transformer)" \
    -c "$(checkpoint rnn)" --beam 5 --weights "$weight,$(awk -v w="$weight" 'BEGIN {print 1 - w}')"
  bleu="$("$bin/nmtzoo-evaluate" data/multi30k/val.en.gz -i "$work/val.transformer+rnn.w$weight.hyp" -m bleu -b -w 2)"
  printf '%s\t%s\n' "$weight" "$bleu" >> "$out/pair_weights_val.tsv"
  if awk -v a="$bleu" -v b="$best_bleu" 'BEGIN {exit !(a > b)}'; then best_weight="$weight" best_bleu="$bleu"; fi
done
: > "$out/pair_variants.txt"
for test in "${tests[@]}"; do
  input="data/multi30k/$test.de.gz"
  SEARCH="beam 5, weights $best_weight (val)"
  translate "$test.transformer+rnn.w$best_weight" "$input" -c "$(checkpoint transformer)" -c "$(checkpoint rnn)" \
    --beam 5 --weights "$best_weight,$(awk -v w="$best_weight" 'BEGIN {print 1 - w}')"
  SEARCH="beam 5, logprob"
  translate "$test.transformer+rnn.logprob" "$input" -c "$(checkpoint transformer)" -c "$(checkpoint rnn)" \
    --beam 5 --ensemble-mode logprob
  echo "== $test: Transformer, Transformer + RNN with the transformer weight $best_weight chosen on val, and with --ensemble-mode logprob" >> "$out/pair_variants.txt"
  SACREBLEU_FORMAT=text "$bin/nmtzoo-evaluate" "data/multi30k/$test.en.gz" -i "$work/$test.transformer.hyp" \
    "$work/$test.transformer+rnn.w$best_weight.hyp" "$work/$test.transformer+rnn.logprob.hyp" \
    -m bleu chrf ter --paired-bs >> "$out/pair_variants.txt"
done

# 2. Lexical constraints with the Transformer.
/usr/bin/python3 experiments/measure/constraint_phrases.py make "$src" "$ref" "$work/constraints.tsv" --seed 1
printf 'search\tconstraints_met\tconstraints\tshare_met\tBLEU\tsentences_per_second\n' > "$out/constraints.tsv"
for beam in 5 10; do
  for mode in none unordered ordered; do
    name="test_2016_flickr.transformer_beam${beam}_$mode"
    SEARCH="beam $beam, constraints $mode"
    if [[ $mode == none ]]; then  # the same sources, unconstrained
      translate "$name" "$src" -c "$(checkpoint transformer)" --beam "$beam"
    else
      translate "$name" "$work/constraints.tsv" -c "$(checkpoint transformer)" --beam "$beam" \
        --input-format tsv --constraints "$mode"
    fi
    read -r met total < <(/usr/bin/python3 experiments/measure/constraint_phrases.py count "$work/constraints.tsv" "$work/$name.hyp")
    bleu="$("$bin/nmtzoo-evaluate" "$ref" -i "$work/$name.hyp" -m bleu -b -w 2)"
    sps="$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$work/$name.json")"
    printf 'beam %s, constraints %s\t%s\t%s\t%.1f%%\t%s\t%s\n' "$beam" "$mode" "$met" "$total" \
      "$(awk -v m="$met" -v t="$total" 'BEGIN {print 100 * m / t}')" "$bleu" "$sps" >> "$out/constraints.tsv"
  done
done
# 3. Speeds side by side (A B C ... A B C ..., the machine's speed drifts), test_2016_flickr.
printf 'round\tsearch\tsentences_per_second\n' > "$out/speed_ab.tsv"
for round in 1 2; do
  for setup in "beam5" "beam10" "pair" "all4" "constrained5" "constrained10"; do
    t="$(checkpoint transformer)"
    case "$setup" in
      beam5) args=(-i "$src" -c "$t" --beam 5) ;;
      beam10) args=(-i "$src" -c "$t" --beam 10) ;;
      pair) args=(-i "$src" -c "$t" -c "$(checkpoint rnn)" --beam 5) ;;
      all4) args=(-i "$src" -c "$t" -c "$(checkpoint rnn)" -c "$(checkpoint rnn_encdec)" -c "$(checkpoint rnn_luong)" --beam 5) ;;
      constrained5) args=(-i "$work/constraints.tsv" --input-format tsv --constraints unordered -c "$t" --beam 5) ;;
      constrained10) args=(-i "$work/constraints.tsv" --input-format tsv --constraints unordered -c "$t" --beam 10) ;;
    esac
    "$bin/nmtzoo-translate" "${args[@]}" -o "$work/speed.hyp" --threads "$threads" --quiet --stats "$work/speed.json"
    printf '%s\t%s\t%s\n' "$round" "$setup" \
      "$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$work/speed.json")" >> "$out/speed_ab.tsv"
  done
done
cat "$out/ensembles.txt" "$out/constraints.tsv" "$out/speed.tsv" "$out/speed_ab.tsv"
