#!/usr/bin/env bash
# Decoding speed and BLEU per number format (README "Performance"): for a Transformer and an RNN
# checkpoint, nmtzoo-bench's decoding modes in float32, bf16 and int8 (greedy and beam 5 batched,
# batch size 1, and sentences one at a time with median/p90 latency) at 2 threads, the latency
# again at 1 thread, and test_2016_flickr BLEU of beam 5 in each format. A benchmark, never a test.
#   scripts/measure_dtypes.sh TRANSFORMER_CHECKPOINT RNN_CHECKPOINT
# Writes reports/bench/dtypes.md and the JSON of each run beside it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
(($# == 2)) || { sed -n '2,6p' "$0"; exit 2; }
source scripts/data-dir.sh
scripts/build.sh >/dev/null
out=reports/bench
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
zcat data/multi30k/test_2016_flickr.de.gz > "$work/test.de"
report="$out/dtypes.md.partial"
{
  echo "# Decoding per number format"
  echo
  echo "Measured by \`scripts/measure_dtypes.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, commit $(git rev-parse --short HEAD);"
  echo "test_2016_flickr (1,000 sentences), batches of 4,096 source tokens, length penalty avg 1.0."
  echo
} > "$report"
for name in transformer rnn; do
  checkpoint="$1"; [[ $name == rnn ]] && checkpoint="$2"
  echo "== $name: $checkpoint"
  for threads in 2 1; do
    extra=(--latency --bf16-decoding --int8-decoding)
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
    echo "| dtype | beam 5 sentences/s | BLEU |"
    echo "|---|---:|---:|"
  } >> "$report"
  for dtype in float32 bf16 int8; do
    build/bin/nmtzoo-translate -c "$checkpoint" -i "$work/test.de" -o "$work/$name.$dtype.en" --threads 2 \
      --beam 5 --dtype "$dtype" --stats "$work/stats.json" --quiet
    rate="$(/usr/bin/python3 -c "import json; print('%.1f' % json.load(open('$work/stats.json'))['sentences_per_second'])")"
    bleu="$(build/bin/nmtzoo-evaluate data/multi30k/test_2016_flickr.en.gz -i "$work/$name.$dtype.en" -b)"
    echo "| $dtype | $rate | $bleu |" >> "$report"
  done
  echo >> "$report"
done
mv "$report" "$out/dtypes.md"
cat "$out/dtypes.md"
