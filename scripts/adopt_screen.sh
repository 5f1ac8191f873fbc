#!/usr/bin/env bash
# A screened run becomes compare.sh's run of a model's seed, once its recipe is adopted:
#   scripts/adopt_screen.sh NAME MODEL [--seed K] [--pair de_en]
# After the screen's overrides are written into configs/multi30k_<pair>_<MODEL>.yaml, the run
# scripts/screen.sh made in runs/screen/NAME is the very run compare.sh would train for seed K
# (default 1; a screen for K > 1 is made with the override training.seed=K) with the config's
# budget: this checks that (the run's resolved config equals the config's, resolved with the
# screen's plumbing and the seed), moves the run to runs/multi30k_<pair>_<MODEL> (seed 1) or
# runs/multi30k_<pair>_<MODEL>_seed<K> with the recipe compare.sh keeps (compare_config.yaml) and
# leaves a link at the old path for screen.sh. A screen made with SCREEN_DECODE=1 also has its
# val choice and test outputs in reports/tuning/screens/NAME: they become the seed's results
# folder (reports/multi30k_<pair>/<MODEL>[_seed<K>]), which compare.sh keeps and scores, so the
# screen is adopted even when its run was lost with its machine. It refuses, changing nothing,
# when the screen is unfinished, the recipes differ, or that seed already has a run or a complete
# results folder (move those aside first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pair=de_en
seed=1
positional=()
while (($#)); do
  case "$1" in
    --pair) pair="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} == 2)) || { sed -n '2,15p' "$0" >&2; exit 2; }
[[ "$seed" =~ ^[1-9][0-9]*$ ]] || { echo "adopt_screen.sh: --seed expects a positive integer, got '$seed'" >&2; exit 2; }
name="${positional[0]}"
model="${positional[1]}"
cd "$root"
source scripts/model_run.sh  # recipe_of, run_plumbing, seed_folder, seed_settings
folder="$(seed_folder "$model" "$seed")"
fail() { echo "adopt_screen.sh: $*" >&2; exit 1; }

screened="runs/screen/$name"
config="configs/multi30k_${pair}_${model}.yaml"
target="runs/multi30k_${pair}_${folder}"
results="reports/multi30k_${pair}/${folder}"
kept="reports/tuning/screens/$name"
[[ -f "$config" ]] || fail "no config '$config'"
[[ -L "$screened" ]] && fail "$screened was already adopted (it links to $(readlink "$screened"))"
have_run=0
have_kept=0
[[ -f "$screened/training_summary.json" ]] && have_run=1
[[ -f "$kept/training_summary.json" ]] && have_kept=1
((have_run || have_kept)) ||
  fail "$screened has no training_summary.json and $kept no results: the screen has not finished"
((have_run)) && [[ -e "$target" ]] && fail "$target exists: compare.sh already has a run of $folder (move it aside first)"
[[ -f "$results/training_summary.json" ]] &&
  fail "$results holds a complete results folder, which compare.sh would keep (move it aside first)"
resolved="$screened/config.yaml"
((have_run)) || resolved="$kept/config.yaml"

# screen.sh's plumbing and compare.sh's seed (the budget is the config's own when the screen ran
# with it; any other budget shows in the difference).
expected="$(mktemp)"
trap 'rm -f "$expected"' EXIT
mapfile -t plumbing < <(run_plumbing "$screened")
mapfile -t -O "${#plumbing[@]}" plumbing < <(seed_settings "$seed")
build/bin/nmtzoo-config "$config" "${plumbing[@]}" > "$expected"
if ! cmp -s "$expected" "$resolved"; then
  echo "adopt_screen.sh: $name was not trained with $config as it is now (< the config, > the run):" >&2
  diff "$expected" "$resolved" >&2 || true
  exit 1
fi

if ((have_kept)); then
  mkdir -p "$results"
  (cd "$kept" && find . -mindepth 1 -maxdepth 1 ! -name training_summary.json ! -name config.yaml \
    ! -name attention_sources.txt ! -name decoding_checkpoint.txt -exec cp -r {} "$root/$results/" \;)
  ((seed == 1)) || rm -rf "$results/attention"  # compare.sh draws seed 1's only
  sed "s#^$screened/#$target/#" "$kept/decoding_checkpoint.txt" > "$results/decoding_checkpoint.txt"
  recipe_of "$config" > "$results/compare_config.yaml"
  cp "$kept/training_summary.json" "$results/training_summary.json"  # last: the folder is complete
  echo "$name's results are now $model's seed-$seed results: $results"
fi
if ((have_run)); then
  mv "$screened" "$target"
  [[ -f "$screened.log" ]] && mv "$screened.log" "$target.log"
  recipe_of "$config" > "$target/compare_config.yaml"
  ln -s "../$(basename "$target")" "$screened"
  echo "$name is now $model's seed-$seed run: $target"
fi
