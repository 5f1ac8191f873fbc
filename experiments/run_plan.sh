#!/usr/bin/env bash
# Runs an experiment plan (a YAML file: models, directions, seeds, budget, test sets, ensemble;
# docs/experiments.md) end to end, resumably, and writes its report:
#   experiments/run_plan.sh PLAN [--fresh]     run what is left, then report
#   experiments/run_plan.sh PLAN --status      show the grid's progress only
#   experiments/run_plan.sh PLAN --report      rebuild the report from the kept folders only
#   experiments/run_plan.sh PLAN --train-only [--train-bin DIR]
#                                              train what is left, decode nothing (DIR: a frozen
#                                              copy of build/bin to train with, not rebuilt)
# The plan is checked first (build/bin/nmtzoo-plan: an error names its line and key). Each
# direction is one experiments/compare.sh run with the plan's configs and overrides: finished
# runs whose recipe (resolved config) is unchanged are kept, an interrupted one is resumed, a
# changed recipe stops the script with the difference. Before each direction the grid's progress
# (runs done, running, left, and the training time left) is shown. The report (per-direction
# tables with 95% confidence intervals and paired-bootstrap tests against the baseline, a summary
# table of directions x systems with significance after a correction for multiple comparisons,
# BLEU by direction as SVG) goes to reports/plans/<plan name>/; each direction's own report stays in
# reports/multi30k_<pair>/.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
parse_args "fresh status report train-only train-bin:" "$@"
expect_args 1
[[ -z "$train_bin" ]] || train_bin="$(realpath "$train_bin")"
plan="$(realpath --relative-to="$root" "${args[0]}")" || die "no plan file '${args[0]}'"
prepare_workspace
[[ -f "$plan" ]] || die "no plan file '${args[0]}'"
bin="${train_bin:-build/bin}"
grid="$("$bin/nmtzoo-plan" runs "$plan")" || die "the plan $plan has errors (above)"
if ((status)); then exec "$bin/nmtzoo-plan" status "$plan"; fi
if ((!report)); then
  fresh_args=()
  ((fresh)) && fresh_args=(--fresh)
  if ((train_only)); then
    fresh_args+=(--train-only)
    [[ -z "$train_bin" ]] || fresh_args+=(--train-bin "$train_bin")
  fi
  while IFS=$'\t' read -ra direction; do
    echo "== progress of $plan"
    "$bin/nmtzoo-plan" status "$plan" | tail -1
    echo "== direction ${direction[1]}"
    experiments/compare.sh "${direction[@]}" "${fresh_args[@]}"
  done <<< "$grid"
  "$bin/nmtzoo-plan" status "$plan" | tail -1
fi
((train_only)) && exit 0
"$bin/nmtzoo-plan" report "$plan"
