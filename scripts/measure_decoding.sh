#!/usr/bin/env bash
# The decoding-breadth measurements of README "Decoding", on Multi30k de->en test_2016_flickr with
# the models of scripts/train_ensemble_members.sh (runs/ensemble<minutes>/<model>):
#   scripts/measure_decoding.sh [--minutes 15] [--threads 2] [--out reports/decoding]
# 1. Ensembles: each model alone, every pair and all four (beam 5, --ensemble-mode prob, equal
#    weights), scored with BLEU, chrF2 and TER with paired bootstrap against the Transformer,
#    and their decoding speed.
# 2. Lexical constraints: 1-2 phrases per sentence from the reference (scripts/constraint_phrases.py,
#    seed 1): the share of constraints met, BLEU and speed of plain and constrained beam 5 and 10.
# Writes OUT/ensembles.txt, OUT/constraints.tsv and OUT/speed.tsv; translations stay in runs/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
minutes=15
threads=2
out=reports/decoding
while (($#)); do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "measure_decoding.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
source "$root/scripts/data-dir.sh"
"$root/scripts/build.sh" >/dev/null
cd "$root"
bin=build/bin
models=(transformer rnn rnn_encdec rnn_luong)
runs="runs/ensemble${minutes}"
work="$runs/measurements"
mkdir -p "$work" "$out"
src=data/multi30k/test_2016_flickr.de.gz
ref=data/multi30k/test_2016_flickr.en.gz
for m in "${models[@]}"; do
  [[ -f "$runs/$m/training_summary.json" ]] || { echo "measure_decoding.sh: $runs/$m is not trained (scripts/train_ensemble_members.sh)" >&2; exit 1; }
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

# 1. Ensembles.
SEARCH="beam 5"
systems=()
for m in "${models[@]}"; do
  translate "$m" "$src" -c "$(checkpoint "$m")" --beam 5
  systems+=("$work/$m.hyp")
done
for ((i = 0; i < ${#models[@]}; ++i)); do
  for ((j = i + 1; j < ${#models[@]}; ++j)); do
    a="${models[i]}" b="${models[j]}"
    translate "$a+$b" "$src" -c "$(checkpoint "$a")" -c "$(checkpoint "$b")" --beam 5
    systems+=("$work/$a+$b.hyp")
  done
done
all="$(IFS=+; echo "${models[*]}")"
translate "$all" "$src" -c "$(checkpoint transformer)" -c "$(checkpoint rnn)" \
  -c "$(checkpoint rnn_encdec)" -c "$(checkpoint rnn_luong)" --beam 5
systems+=("$work/$all.hyp")
SACREBLEU_FORMAT=text "$bin/nmtzoo-evaluate" "$ref" -i "${systems[@]}" -m bleu chrf ter --paired-bs \
  > "$out/ensembles.txt"

# 2. Lexical constraints with the Transformer.
/usr/bin/python3 scripts/constraint_phrases.py make "$src" "$ref" "$work/constraints.tsv" --seed 1
printf 'search\tconstraints_met\tconstraints\tshare_met\tBLEU\tsentences_per_second\n' > "$out/constraints.tsv"
for beam in 5 10; do
  for mode in none unordered ordered; do
    name="transformer_beam${beam}_$mode"
    SEARCH="beam $beam, constraints $mode"
    if [[ $mode == none ]]; then  # the same sources, unconstrained
      translate "$name" "$src" -c "$(checkpoint transformer)" --beam "$beam"
    else
      translate "$name" "$work/constraints.tsv" -c "$(checkpoint transformer)" --beam "$beam" \
        --input-format tsv --constraints "$mode"
    fi
    read -r met total < <(/usr/bin/python3 scripts/constraint_phrases.py count "$work/constraints.tsv" "$work/$name.hyp")
    bleu="$("$bin/nmtzoo-evaluate" "$ref" -i "$work/$name.hyp" -m bleu -b -w 2)"
    sps="$(sed -nE 's/.*"sentences_per_second": *([0-9.]+).*/\1/p' "$work/$name.json")"
    printf 'beam %s, constraints %s\t%s\t%s\t%.1f%%\t%s\t%s\n' "$beam" "$mode" "$met" "$total" \
      "$(awk -v m="$met" -v t="$total" 'BEGIN {print 100 * m / t}')" "$bleu" "$sps" >> "$out/constraints.tsv"
  done
done
cat "$out/ensembles.txt" "$out/constraints.tsv" "$out/speed.tsv"
