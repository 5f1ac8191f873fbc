#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Chooses a lexical shortlist's sizes on the validation set (never a test set): for each
# decoding.shortlist_top_k x shortlist_frequent, beam-5 val BLEU, speed and the mean shortlist size,
# beside the whole vocabulary. A measurement, never a test.
#   experiments/measure/shortlist_sizes.sh CHECKPOINT SHORTLIST [DTYPE]   (DTYPE: float32 (default) or int8)
# Writes reports/bench/shortlist_tuning_<checkpoint's run name>_<dtype>.md.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 2 3
checkpoint="${args[0]}"
shortlist="${args[1]}"
dtype="${args[2]:-float32}"
prepare_workspace
name="$(basename "$(dirname "$(dirname "$checkpoint")")")"
out=reports/bench
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
zcat data/multi30k/val.de.gz > "$work/val.src"
report="$out/shortlist_tuning_${name}_${dtype}.md"
{
  echo "# Shortlist sizes for $name on val ($dtype)"
  echo
  echo "Measured by \`experiments/measure/shortlist_sizes.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD):"
  echo "\`$checkpoint\`, shortlist \`$shortlist\`, val (1,014 sentences), beam 5, length penalty avg 1.0,"
  echo "batches of 4,096 source tokens, 2 threads. Speeds drift by ±20% on this machine: compare rows of one run."
  echo
  echo "| top_k | frequent | mean shortlist | sentences/s | val BLEU |"
  echo "|---:|---:|---:|---:|---:|"
} > "$report.partial"
translate() {  # ARGS...: one decoding of val; appends a row
  build/bin/nmtzoo-translate -c "$checkpoint" -i "$work/val.src" -o "$work/out" --threads 2 --beam 5 \
    --dtype "$dtype" --stats "$work/stats.json" --quiet "$@"
  /usr/bin/python3 -c "import json; s = json.load(open('$work/stats.json')); print('%.0f %.1f' % (s['mean_shortlist_size'], s['sentences_per_second']))"
}
row() {  # TOP_K FREQUENT
  read -r size rate < <(translate --shortlist "$shortlist" --set "decoding.shortlist_top_k=$1" \
    --set "decoding.shortlist_frequent=$2")
  bleu="$(build/bin/nmtzoo-evaluate data/multi30k/val.en.gz -i "$work/out" -b)"
  echo "| $1 | $2 | $size | $rate | $bleu |" | tee -a "$report.partial"
}
read -r _ rate < <(translate)
bleu="$(build/bin/nmtzoo-evaluate data/multi30k/val.en.gz -i "$work/out" -b)"
echo "| (whole vocabulary) | | all | $rate | $bleu |" \
  | tee -a "$report.partial"
for top_k in 5 10 20 50; do
  for frequent in 0 100 500; do row "$top_k" "$frequent"; done
done
mv "$report.partial" "$report"
echo "wrote $report"
