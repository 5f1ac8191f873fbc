#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One loaded model translating for several threads at once (docs/serving.md, "Concurrent
# translation"): from Python, one Translator shared by 1 or 2 threads, one sentence a call
# (concurrent_translation.py, outputs checked byte for byte); then nmtzoo-serve with
# serve.decode_workers 1 and 2 on --threads 2, one sentence a request from 2 and 64 clients
# (load_generator.py), in rounds A B A B.
#   experiments/measure/concurrent_translation.sh [CHECKPOINT]
# Writes reports/serve/concurrency.md and the JSON of each run beside it.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 0 1
prepare_workspace
checkpoint_argument
py=/usr/bin/python3
out=reports/serve
mkdir -p "$out"
work="$(mktemp -d)"
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
zcat data/multi30k/test_2016_flickr.de.gz > "$work/test.de"

PYTHONPATH=build/python $py experiments/measure/concurrent_translation.py "$checkpoint" "$work/test.de" \
  --sentences 1000 --rounds 3 --json "$out/concurrency_python.json"

rows="$work/rows"
for round in 1 2; do
  for workers in 1 2; do
    start_server "$work/server.log" build/bin/nmtzoo-serve -c "$checkpoint" --port 0 --threads 2 \
      --set "serve.decode_workers=$workers"
    for clients in 2 64; do
      json="$out/concurrency_serve_${workers}workers_${clients}clients_$round.json"
      $py experiments/measure/load_generator.py --port "$port" --sentences "$work/test.de" --clients "$clients" \
        --batch 1 --requests 1000 --seconds 300 --json "$json" >&2
      echo "$workers $clients $round $json" >> "$rows"
    done
    kill "$server"
    wait "$server" 2>/dev/null || true
  done
done

{
  echo "# One loaded model, several translations at once"
  echo
  echo "Measured by \`experiments/measure/concurrent_translation.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, commit $(git rev-parse --short HEAD);"
  echo "\`$checkpoint\`, test_2016_flickr (German), one sentence a call or request, the checkpoint's decoding options."
  echo
  echo "From Python (one \`nmtzoo.Translator\`, 1,000 sentences a run; \"identical\": every output equals the first run's):"
  echo
  echo "| round | Python threads | intra-op threads each | sentences/s | identical |"
  echo "|---:|---:|---:|---:|---|"
  $py - "$out/concurrency_python.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(f"| {r['round']} | {r['python_threads']} | {r['intra_op_threads']} | {r['sentences_per_second']:.1f} | {r['identical']} |")
PY
  echo
  echo "nmtzoo-serve, \`--threads 2\`, 1,000 requests of one sentence (load_generator.py):"
  echo
  echo "| round | decode_workers | clients | req/s | p50 ms | p99 ms | errors |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  while read -r workers clients round json; do
    json_row "$json" "| {2} | {0} | {1} | {requests_per_second:.1f} | {p50_ms:.0f} | {p99_ms:.0f} | {errors} |" \
      "$workers" "$clients" "$round"
  done < "$rows"
} > "$out/concurrency.md"
cat "$out/concurrency.md"
