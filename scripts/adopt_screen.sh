#!/usr/bin/env bash
# A screened run becomes compare.sh's run of a model's seed, once its recipe is adopted:
#   scripts/adopt_screen.sh NAME MODEL [--seed K] [--pair de_en]
# After the screen's overrides are written into configs/multi30k_<pair>_<MODEL>.yaml, the run
# scripts/screen.sh made in runs/screen/NAME is the very run compare.sh would train for seed K
# (default 1; a screen for K > 1 is made with the override training.seed=K) with the config's
# budget: this checks that (the run's resolved config equals the config's, resolved with the
# screen's plumbing and the seed), moves the run to runs/multi30k_<pair>_<MODEL> (seed 1) or
# runs/multi30k_<pair>_<MODEL>_seed<K> with the recipe compare.sh keeps (compare_config.yaml) and
# leaves a link at the old path for screen.sh. It refuses, changing nothing, when the run is
# unfinished, the recipes differ, or that seed already has a run or a complete results folder
# (move those aside first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pair=de_en
seed=1
positional=()
while (($#)); do
  case "$1" in
    --pair) pair="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} == 2)) || { sed -n '2,12p' "$0" >&2; exit 2; }
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
[[ -f "$config" ]] || fail "no config '$config'"
[[ -f "$screened/training_summary.json" ]] || fail "$screened has no training_summary.json: the screen has not finished"
[[ -L "$screened" ]] && fail "$screened was already adopted (it links to $(readlink "$screened"))"
[[ -e "$target" ]] && fail "$target exists: compare.sh already has a run of $folder (move it aside first)"
[[ -f "$results/training_summary.json" ]] &&
  fail "$results holds a complete results folder, which compare.sh would keep (move it aside first)"

# screen.sh's plumbing and compare.sh's seed (the budget is the config's own when the screen ran
# with it; any other budget shows in the difference).
expected="$(mktemp)"
trap 'rm -f "$expected"' EXIT
mapfile -t plumbing < <(run_plumbing "$screened")
mapfile -t -O "${#plumbing[@]}" plumbing < <(seed_settings "$seed")
build/bin/nmtzoo-config "$config" "${plumbing[@]}" > "$expected"
if ! cmp -s "$expected" "$screened/config.yaml"; then
  echo "adopt_screen.sh: $screened was not trained with $config as it is now (< the config, > the run):" >&2
  diff "$expected" "$screened/config.yaml" >&2 || true
  exit 1
fi

mv "$screened" "$target"
[[ -f "$screened.log" ]] && mv "$screened.log" "$target.log"
recipe_of "$config" > "$target/compare_config.yaml"
ln -s "../$(basename "$target")" "$screened"
echo "$name is now $model's seed-$seed run: $target"
