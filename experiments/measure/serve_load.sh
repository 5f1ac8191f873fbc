#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Load figures of nmtzoo-serve (docs/serving.md): the server and load_generator.py share this
# machine, on loopback. Offline nmtzoo-translate speed on the same sentences and options first,
# then 1, 8 and 64 clients sending test_2016_flickr sentences one per request and in batches of
# 32, then 20,000 single-sentence requests from 64 clients with the server's resident set sampled
# after the first 1,000 and at the end.
#   experiments/measure/serve_load.sh [CHECKPOINT]   (default: the quickstart run's checkpoint_best.pt)
# Writes reports/serve/serve.md and the JSON of each run beside it.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 0 1
prepare_workspace
bin=build/bin
checkpoint_argument
out=reports/serve
mkdir -p "$out"
work="$(mktemp -d)"
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
zcat data/multi30k/test_2016_flickr.de.gz > "$work/test.de"
threads=2
report="$out/serve.md.partial"

# Offline: the whole set, and one full batch (the first 256 sentences, ~4,096 source tokens).
"$bin/nmtzoo-translate" -c "$checkpoint" -i "$work/test.de" -o "$work/offline.en" --threads "$threads" \
  --stats "$out/offline.json" --quiet
head -256 "$work/test.de" > "$work/batch.de"
"$bin/nmtzoo-translate" -c "$checkpoint" -i "$work/batch.de" -o "$work/batch.en" --threads "$threads" \
  --stats "$out/offline_batch.json" --quiet
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
offline_rate="$(field "$out/offline.json" sentences_per_second)"
batch_seconds="$(field "$out/offline_batch.json" seconds)"

"$bin/nmtzoo-serve" -c "$checkpoint" --port 0 --threads "$threads" > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 200); do grep -q "listening on" "$work/server.log" && break; sleep 0.1; done
port="$(sed -nE 's#.*listening on http://127.0.0.1:([0-9]+)/.*#\1#p' "$work/server.log")"
rss() { awk -v k="$1:" '$1 == k {print int($2 / 1024)}' "/proc/$server/status"; }
max_wait="$(sed -nE 's/.*batches wait at most ([0-9.]+) ms.*/\1/p' "$work/server.log")"

{
  echo "# nmtzoo-serve under load"
  echo
  echo "Measured by \`experiments/measure/serve_load.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, commit $(git rev-parse --short HEAD):"
  echo "\`$checkpoint\`, test_2016_flickr (German), the checkpoint's decoding options, $threads decoding threads,"
  echo "serve.max_wait_ms $max_wait; the load generator (Python, standard library) on the same machine."
  echo
  printf 'Offline `nmtzoo-translate`: %.1f sentences/s; one full batch (256 sentences) %.2f s.\n\n' \
    "$offline_rate" "$batch_seconds"
  echo "| clients | sentences/request | requests | req/s | sentences/s | of offline | p50 ms | p95 ms | p99 ms | errors | generator CPU |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} > "$report"
run_load() {  # CLIENTS BATCH REQUESTS
  local json="$out/load_$1x$2.json"
  /usr/bin/python3 experiments/measure/load_generator.py --port "$port" --sentences "$work/test.de" --clients "$1" \
    --batch "$2" --requests "$3" --seconds 300 --json "$json" >&2
  /usr/bin/python3 - "$json" "$offline_rate" >> "$report" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); offline = float(sys.argv[2])
print(f"| {r['clients']} | {r['batch']} | {r['requests']} | {r['requests_per_second']:.1f} | "
      f"{r['sentences_per_second']:.1f} | {100 * r['sentences_per_second'] / offline:.0f}% | {r['p50_ms']:.0f} | "
      f"{r['p95_ms']:.0f} | {r['p99_ms']:.0f} | {r['errors']} | {100 * r['generator_cpu_share']:.0f}% of a core |")
PY
}
run_load 1 1 200
run_load 8 1 500
run_load 64 1 2000
run_load 1 32 30
run_load 8 32 60
run_load 64 32 128

# Memory over 20,000 requests.
/usr/bin/python3 experiments/measure/load_generator.py --port "$port" --sentences "$work/test.de" --clients 64 --batch 1 \
  --requests 1000 --seconds 600 >&2
after_1000="$(rss VmRSS)"
/usr/bin/python3 experiments/measure/load_generator.py --port "$port" --sentences "$work/test.de" --clients 64 --batch 1 \
  --requests 19000 --seconds 900 --json "$out/load_20000.json" >&2
at_end="$(rss VmRSS)"
peak="$(rss VmHWM)"
errors="$(field "$out/load_20000.json" errors)"
{
  echo
  printf 'Over 20,000 single-sentence requests from 64 clients: resident set %s MB after the first 1,000, %s MB at the end (%+.1f%%), peak %s MB; %s errors.\n' \
    "$after_1000" "$at_end" "$(/usr/bin/python3 -c "print(100 * ($at_end - $after_1000) / $after_1000)")" "$peak" "$errors"
} >> "$report"
kill -TERM "$server"; wait "$server" || true
mv "$report" "$out/serve.md"
cat "$out/serve.md"
