#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Decoding speed and BLEU per number format and lexical shortlist (docs/performance.md): for a
# Transformer and an RNN checkpoint, a shortlist learned by nmtzoo-shortlist, nmtzoo-bench's
# decoding modes in float32, bf16 and int8, with and without the shortlist (greedy and beam 5
# batched, batch size 1, and sentences one at a time with median/p90 latency) at 2 threads, the
# latency again at 1 thread, test_2016_flickr BLEU of beam 5 in each, and the headline ratio
# (int8 + shortlist against float32) timed A B A B by nmtzoo-translate. A benchmark, never a test.
#   experiments/measure/number_formats.sh TRANSFORMER_CHECKPOINT RNN_CHECKPOINT
# Writes reports/bench/dtypes.md and the JSON of each run beside it.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 2
prepare_workspace
out=reports/bench
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
zcat data/multi30k/test_2016_flickr.de.gz > "$work/test.de"
report="$out/dtypes.md.partial"
{
  echo "# Decoding per number format"
  echo
  echo "Measured by \`experiments/measure/number_formats.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, commit $(git rev-parse --short HEAD);"
  echo "test_2016_flickr (1,000 sentences), batches of 4,096 source tokens, length penalty avg 1.0."
  echo
} > "$report"
for name in transformer rnn; do
  checkpoint="${args[0]}"; [[ $name == rnn ]] && checkpoint="${args[1]}"
  echo "== $name: $checkpoint"
  build/bin/nmtzoo-shortlist "$checkpoint" -o "$work/$name.shortlist" --threads 2
  for threads in 2 1; do
    extra=(--latency --bf16-decoding --int8-decoding --shortlist "$work/$name.shortlist")
    build/bin/nmtzoo-bench --checkpoint "$checkpoint" --threads "$threads" --no-uncached "${extra[@]}" \
      --json "$out/dtypes_${name}_${threads}threads.json" | tee "$work/bench_$threads.txt"
  done
  {
    echo "## $name (\`$checkpoint\`)"
    echo
    echo '```'
    grep -E "^(machine|decoding|latency|int8)" "$work/bench_2.txt"
    echo "-- 1 thread --"
    grep -E "^(machine|latency)" "$work/bench_1.txt"
    echo '```'
    echo
    echo "nmtzoo-translate, text to text (tokenization and int8 packing included), in the order run:"
    echo
    echo "| dtype | shortlist | beam 5 sentences/s | mean shortlist | BLEU |"
    echo "|---|---|---:|---:|---:|"
  } >> "$report"
  # float32 and int8 + shortlist twice, alternating, for the headline ratio under drift.
  for variant in float32: bf16: int8: float32:shortlist int8:shortlist float32: int8:shortlist; do
    dtype="${variant%%:*}"
    shortlist=()
    [[ "${variant#*:}" == shortlist ]] && shortlist=(--shortlist "$work/$name.shortlist")
    build/bin/nmtzoo-translate -c "$checkpoint" -i "$work/test.de" -o "$work/$name.out.en" --threads 2 \
      --beam 5 --dtype "$dtype" "${shortlist[@]}" --stats "$work/stats.json" --quiet
    read -r rate size < <(/usr/bin/python3 -c "import json; s = json.load(open('$work/stats.json')); print('%.1f %.0f' % (s['sentences_per_second'], s['mean_shortlist_size']))")
    bleu="$(build/bin/nmtzoo-evaluate data/multi30k/test_2016_flickr.en.gz -i "$work/$name.out.en" -b)"
    echo "| $dtype | ${variant#*:} | $rate | $size | $bleu |" >> "$report"
  done
  echo >> "$report"
done
mv "$report" "$out/dtypes.md"
cat "$out/dtypes.md"
