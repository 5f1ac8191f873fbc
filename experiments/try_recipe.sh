#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tries a change of recipe on val only (never a test set): one training run of a fixed budget per
# call, scored by its best validation BLEU (decoded as training validates), one row appended to
# reports/tuning/screening.md with the overrides, so the tuning log is the commands' own output.
#   experiments/try_recipe.sh [--budget 15m] [--keep-outputs] [--bin DIR] NAME CONFIG [KEY=VALUE ...]
# Trains runs/screen/NAME (resumed when interrupted); a finished run is not retrained and its row
# is not written twice. Run one at a time: the budget is wall-clock time of this machine.
# --bin DIR trains with the nmtzoo-train already built in DIR instead of building the tree, so a
# queue of tries keeps one binary while the source changes under it.
# --keep-outputs also keeps what compare.sh would keep of the run, in reports/tuning/screens/NAME:
# the checkpoint and length penalty chosen on val (experiments/tune_decoding.sh), the test sets
# translated with them but not scored, the metrics, the resolved config and, last, the training
# summary. Runs live on the machine that trained them; with its outputs kept, a tried recipe can
# still become a model's seed (experiments/promote_recipe.sh) after its run is lost. Its test
# outputs are scored only then, by compare.sh.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
budget=15m
parse_args "budget: keep-outputs bin:" "$@"
expect_args 2 any
name="${args[0]}"
config="${args[1]}"
overrides=("${args[@]:2}")
[[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || usage_error "NAME '$name' may hold only letters, digits, _ . -"
[[ -f "$root/$config" || -f "$config" ]] || usage_error "no config '$config'"
source "$root/scripts/data-dir.sh"
if [[ -z "$bin" ]]; then
  "$root/scripts/build.sh" >/dev/null
  bin="$root/build/bin"
fi
apps="$bin"
cd "$root"
run="runs/screen/$name"
# compare.sh's plumbing: a tried recipe's run may become a model's seed (promote_recipe.sh).
source experiments/lib/model_run.sh
mapfile -t sets < <(run_plumbing "$run")
sets+=(--set "training.max_time=$budget")
for override in "${overrides[@]}"; do sets+=(--set "$override"); done
[[ -f "$run/training_summary.json" ]] || echo "== trying $name ($config ${overrides[*]}), log in $run.log" >&2
train_run "$run" 0 "$config" "${sets[@]}"
if ((keep_outputs)); then
  kept="reports/tuning/screens/$name"
  if [[ ! -f "$kept/training_summary.json" ]]; then
    # decode_run's settings, as compare.sh's start_experiment sets them for the run's language pair
    src="$(sed -n 's/^  src_lang: "\{0,1\}\([^ "]*\).*/\1/p' "$run/config.yaml")"
    tgt="$(sed -n 's/^  tgt_lang: "\{0,1\}\([^ "]*\).*/\1/p' "$run/config.yaml")"
    tests=(test_2016_flickr test_2017_flickr test_2017_mscoco)
    report="$kept"
    mkdir -p "$kept"
    gzip -dc "data/multi30k/test_2016_flickr.$src.gz" | sed -n 1,3p > "$kept/attention_sources.txt"
    decode_run "$run" "$kept" 1
    cp "$run/config.yaml" "$kept/config.yaml"
    cp "$run/training_summary.json" "$kept/training_summary.json"
  fi
fi
log=reports/tuning/screening.md
mkdir -p reports/tuning
if [[ ! -f "$log" ]]; then
  {
    echo "# Recipe screening on Multi30k val (experiments/try_recipe.sh)"
    echo
    echo "Each row is one run of the stated budget on this machine, scored by its best validation BLEU"
    echo "(greedy, as training validates). Test sets are never scored here."
    echo
    echo "| run | config | overrides | budget | best val BLEU | at update | updates | epochs | target tok/s | date |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
  } > "$log"
fi
grep -q "^| $name |" "$log" && { grep "^| $name |" "$log"; exit 0; }
row=$(/usr/bin/env python3 - "$run/training_summary.json" "$name" "$config" "$budget" "${overrides[*]}" <<'PY'
import datetime, json, sys
path, name, config, budget, overrides = sys.argv[1:]
s = json.load(open(path))
print(f"| {name} | {config} | {overrides or '(none)'} | {budget} | {s['best_score']:.2f} | {s['best_step']} | "
      f"{s['updates']} | {s['epochs']} | {s['target_tokens_per_second']:.0f} | {datetime.date.today()} |")
PY
)
# The row goes after the last row of the table above the first heading, so that the Decisions
# written below it (which may hold tables of their own) stay together; the log is replaced
# atomically.
/usr/bin/env python3 - "$log" "$row" <<'PY'
import os, sys
path, row = sys.argv[1:]
lines = open(path).read().splitlines()
first_heading = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
last = max(i for i, line in enumerate(lines[:first_heading]) if line.startswith("|"))
lines.insert(last + 1, row)
with open(path + ".tmp", "w") as out:
    out.write("\n".join(lines) + "\n")
os.replace(path + ".tmp", path)
PY
echo "$row"
