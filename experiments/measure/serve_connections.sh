#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTTP layer of nmtzoo-serve against the alternatives (docs/serving.md, "The HTTP layer"):
# this build's nmtzoo-serve (Boost.Beast), a baseline nmtzoo-serve (BASELINE_BIN: a copy of an
# older build/bin, such as cpp-httplib's 62c527a) and a /health server on RESTinio
# (http_layers/restinio_health.cpp, compiled here, timed) with the same limits. For each, in
# rounds A B C A B C: GET /health throughput with 64 keep-alive clients (wrk, 5 s), and /health
# latency on fresh connections alone, beside 2,000 idle connections, and beside 200 slow clients
# (connection_probe.py). Then the translation load on Beast and the baseline, A B A B: 64
# clients, one sentence a request (load_generator.py).
#   BASELINE_BIN=/path/to/bin experiments/measure/serve_connections.sh [CHECKPOINT]
# Writes reports/serve/connections.md and the JSON of each run beside it.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
parse_args "" "$@"
expect_args 0 1
prepare_workspace
checkpoint_argument
[[ -x "${BASELINE_BIN:-}/nmtzoo-serve" ]] || usage_error "set BASELINE_BIN to a folder holding an older nmtzoo-serve and its libraries"
command -v wrk > /dev/null || die "wrk is not installed (scripts/setup.sh installs it)"
py=/usr/bin/python3
out=reports/serve
mkdir -p "$out"
work="$(mktemp -d)"
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
zcat data/multi30k/test_2016_flickr.de.gz > "$work/test.de"

compile_start=$(date +%s%N)
g++ -std=c++17 -O2 -o "$work/restinio_health" experiments/measure/http_layers/restinio_health.cpp -lfmt -lhttp_parser -pthread
restinio_compile=$(( ($(date +%s%N) - compile_start) / 100000000 ))
restinio_compile="$((restinio_compile / 10)).$((restinio_compile % 10))"

start_layer() {  # LAYER: starts it on a free port, sets server and port
  local log="$work/server.log"
  case "$1" in
    beast) start_server "$log" build/bin/nmtzoo-serve -c "$checkpoint" --port 0 --threads 2 ;;
    httplib) start_server "$log" env LD_LIBRARY_PATH="$BASELINE_BIN" "$BASELINE_BIN/nmtzoo-serve" -c "$checkpoint" --port 0 --threads 2 ;;
    restinio)
      port=$($py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      "$work/restinio_health" "$port" > "$log" 2>&1 &
      server=$!
      for _ in $(seq 100); do
        $py -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$port" 2> /dev/null && return
        sleep 0.05
      done
      die "restinio_health did not start" ;;
  esac
}
stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

rows="$work/rows"
for round in 1 2; do
  for layer in beast httplib restinio; do
    start_layer "$layer"
    rate=$(wrk -t1 -c64 -d5s "http://127.0.0.1:$port/health" | awk '/Requests\/sec/ {print $2}')
    for scenario in "0 0" "2000 0" "0 200"; do
      read -r idle slow <<< "$scenario"
      json="$out/connections_${layer}_${idle}idle_${slow}slow_$round.json"
      $py experiments/measure/connection_probe.py --port "$port" --idle "$idle" --slow "$slow" --requests 300 --json "$json" >&2
      echo "$layer $round $rate $json" >> "$rows"
    done
    stop_server
  done
done

{
  echo "# nmtzoo-serve's HTTP layer against the alternatives"
  echo
  echo "Measured by \`experiments/measure/serve_connections.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, commit $(git rev-parse --short HEAD);"
  echo "server and clients on this machine, loopback. beast: this build's nmtzoo-serve; httplib: \`$BASELINE_BIN\`"
  echo "(the cpp-httplib layer); restinio: a /health server on RESTinio 0.6.16 with the same limits and a handler pool"
  echo "(compiled in ${restinio_compile} s). /health on fresh connections, one after the other, 300 each;"
  echo "\"refused\": idle connections the server answered or closed within the run."
  echo
  echo "| layer | round | /health req/s (wrk, 64 clients) | beside | p50 ms | p99 ms | max ms | failed | refused |"
  echo "|---|---:|---:|---|---:|---:|---:|---:|---:|"
  while read -r layer round rate json; do
    beside=nothing
    [[ "$json" == *_2000idle_* ]] && beside="2000 idle"
    [[ "$json" == *_200slow_* ]] && beside="200 slow"
    json_row "$json" "| {0} | {1} | {2} | {3} | {p50_ms:.1f} | {p99_ms:.1f} | {max_ms:.1f} | {failed} | {idle_refused_or_closed} |" \
      "$layer" "$round" "$(printf "%.0f" "$rate")" "$beside"
  done < "$rows"
  echo
  echo "Translations, 64 clients, one test_2016_flickr sentence a request, 2,000 requests (load_generator.py):"
  echo
  echo "| layer | round | req/s | p50 ms | p99 ms | errors |"
  echo "|---|---:|---:|---:|---:|---:|"
} > "$out/connections.md.partial"
for round in 1 2; do
  for layer in beast httplib; do
    start_layer "$layer"
    json="$out/connections_translate_${layer}_$round.json"
    $py experiments/measure/load_generator.py --port "$port" --sentences "$work/test.de" --clients 64 --batch 1 \
      --requests 2000 --seconds 300 --json "$json" >&2
    stop_server
    json_row "$json" "| {0} | {1} | {requests_per_second:.1f} | {p50_ms:.0f} | {p99_ms:.0f} | {errors} |" "$layer" "$round" \
      >> "$out/connections.md.partial"
  done
done
mv "$out/connections.md.partial" "$out/connections.md"
cat "$out/connections.md"
