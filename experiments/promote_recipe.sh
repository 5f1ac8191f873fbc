#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Promotes a tried recipe to compare.sh's run of a model's seed, once the recipe is adopted:
#   experiments/promote_recipe.sh [--seed K] [--pair de_en] NAME MODEL
# After the overrides of experiments/try_recipe.sh's run NAME are written into
# configs/multi30k_<pair>_<MODEL>.yaml, its run in runs/screen/NAME is the very run compare.sh
# would train for seed K (default 1; a try for K > 1 is made with the override training.seed=K)
# with the config's budget: this checks that (the run's resolved config equals the config's,
# resolved with the same plumbing and the seed), moves the run to runs/multi30k_<pair>_<MODEL>
# (seed 1) or runs/multi30k_<pair>_<MODEL>_seed<K> with the recipe compare.sh keeps
# (compare_config.yaml) and leaves a link at the old path for try_recipe.sh. A try made with
# --keep-outputs also has its val choice and test outputs in reports/tuning/screens/NAME: they
# become the seed's results folder (reports/multi30k_<pair>/<MODEL>[_seed<K>]), which compare.sh
# keeps and scores, so the recipe is promoted even when its run was lost with its machine. It
# refuses, changing nothing, when the run is unfinished, the recipes differ, or that seed already
# has a run or a complete results folder (move those aside first).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
pair=de_en
seed=1
parse_args "pair: seed:" "$@"
expect_args 2
positive_integer --seed "$seed"
name="${args[0]}"
model="${args[1]}"
cd "$root"
source experiments/lib/model_run.sh  # recipe_of, run_plumbing, seed_folder, seed_settings
folder="$(seed_folder "$model" "$seed")"

screened="runs/screen/$name"
config="configs/multi30k_${pair}_${model}.yaml"
target="runs/multi30k_${pair}_${folder}"
results="reports/multi30k_${pair}/${folder}"
kept="reports/tuning/screens/$name"
[[ -f "$config" ]] || die "no config '$config'"
[[ -L "$screened" ]] && die "$screened was already promoted (it links to $(readlink "$screened"))"
have_run=0
have_kept=0
[[ -f "$screened/training_summary.json" ]] && have_run=1
[[ -f "$kept/training_summary.json" ]] && have_kept=1
((have_run || have_kept)) ||
  die "$screened has no training_summary.json and $kept no results: the run has not finished"
((have_run)) && [[ -e "$target" ]] && die "$target exists: compare.sh already has a run of $folder (move it aside first)"
[[ -f "$results/training_summary.json" ]] &&
  die "$results holds a complete results folder, which compare.sh would keep (move it aside first)"
resolved="$screened/config.yaml"
((have_run)) || resolved="$kept/config.yaml"

# try_recipe.sh's plumbing and compare.sh's seed (the budget is the config's own when the run was
# made with it; any other budget shows in the difference).
# The run's stored config is resolved again too, so both sides are written by the same program (a
# run written by an older one may list keys another way, e.g. other architectures' model keys).
expected="$(mktemp)"
trained="$(mktemp)"
trap 'rm -f "$expected" "$trained"' EXIT
mapfile -t plumbing < <(run_plumbing "$screened")
mapfile -t -O "${#plumbing[@]}" plumbing < <(seed_settings "$seed")
build/bin/nmtzoo-config "$config" "${plumbing[@]}" > "$expected"
build/bin/nmtzoo-config "$resolved" > "$trained" || die "$resolved does not load (above)"
if ! cmp -s "$expected" "$trained"; then
  echo "$script: $name was not trained with $config as it is now (< the config, > the run):" >&2
  diff "$expected" "$trained" >&2 || true
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
