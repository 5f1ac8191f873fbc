#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs an experiment plan (a YAML file: models, directions, seeds, budget, test sets, ensemble;
# docs/experiments.md) end to end, resumably, and writes its report:
#   experiments/run_plan.sh PLAN [--fresh]     run what is left, then report
#   experiments/run_plan.sh PLAN --status      show the grid's progress only
#   experiments/run_plan.sh PLAN --report      rebuild the report from the kept folders only
#   experiments/run_plan.sh PLAN --train-only  train what is left, decode nothing
#   experiments/run_plan.sh PLAN --frozen-bin DIR [...]
#                                              run every step with the apps of DIR, a frozen
#                                              copy of build/bin (not rebuilt), so the tree may
#                                              be rebuilt meanwhile
# The plan is checked first (build/bin/nmtzoo-plan: an error names its line and key). Each
# direction is one experiments/compare.sh run with the plan's configs and overrides: finished
# runs whose recipe (resolved config) is unchanged are kept, an interrupted one is resumed, a
# changed recipe stops the script with the difference. A run another process is training or
# decoding is skipped (runners one a core share a plan): the script then does the rest, writes the
# report (with --train-only: none) and exits with status 3. Before each direction the grid's progress
# (runs done, running, left, and the training time left) is shown. The report (per-direction
# tables with 95% confidence intervals and paired-bootstrap tests against the baseline, a summary
# table of directions x systems with significance after a correction for multiple comparisons,
# BLEU by direction as SVG) goes to reports/plans/<plan name>/; each direction's own report stays in
# reports/multi30k_<pair>/.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
parse_args "fresh status report train-only frozen-bin:" "$@"
expect_args 1
[[ -z "$frozen_bin" ]] || frozen_bin="$(realpath "$frozen_bin")"
plan="$(realpath --relative-to="$root" "${args[0]}")" || die "no plan file '${args[0]}'"
prepare_workspace
[[ -f "$plan" ]] || die "no plan file '${args[0]}'"
bin="$apps"
grid="$("$bin/nmtzoo-plan" runs "$plan")" || die "the plan $plan has errors (above)"
if ((status)); then exec "$bin/nmtzoo-plan" status "$plan"; fi
if ((!report)); then
  compare_args=()
  busy=0
  ((fresh)) && compare_args=(--fresh)
  ((train_only)) && compare_args+=(--train-only)
  [[ -z "$frozen_bin" ]] || compare_args+=(--frozen-bin "$frozen_bin")
  while IFS=$'\t' read -ra direction; do
    echo "== progress of $plan"
    "$bin/nmtzoo-plan" status "$plan" | tail -1
    echo "== direction ${direction[1]}"
    outcome=0
    experiments/compare.sh "${direction[@]}" "${compare_args[@]}" < /dev/null || outcome=$?
    ((outcome == 3)) && busy=1 && continue  # runs held by another process: left to it
    ((outcome == 0)) || exit "$outcome"
  done <<< "$grid"
  "$bin/nmtzoo-plan" status "$plan" | tail -1
fi
if ((train_only)); then
  if ((${busy:-0})); then
    echo "$script: the grid's training is not complete: the runs skipped above are another process's" >&2
    exit 3
  fi
  exit 0
fi
"$bin/nmtzoo-plan" report "$plan"
if ((${busy:-0})); then
  echo "$script: the grid is not complete: the runs skipped above are another process's; run again once they are done" >&2
  exit 3
fi
