#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load generator for nmtzoo-serve (loopback only, bounded in count and time).

  experiments/measure/load_generator.py --port P --sentences FILE --clients N [--batch B] [--requests R]
                        [--seconds S] [--json OUT]

N client threads, each with its own keep-alive connection, send POST /translate requests of B
sentences (taken in turn from FILE, one per line) until R requests are done or S seconds pass.
Prints requests/s, sentences/s, latency percentiles, errors and this process's CPU time; with
--json also writes them. Uses only Python's standard library.
"""
import argparse
import http.client
import json
import os
import resource
import threading
import time


def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--sentences", required=True)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--target", default="en")
    parser.add_argument("--json")
    args = parser.parse_args()
    with open(args.sentences, encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f if line.strip()]
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "errors": 0, "sentences": 0}
    error_kinds = {}
    latencies = []
    deadline = time.monotonic() + args.seconds

    def take():
        with lock:
            if state["next"] >= args.requests or time.monotonic() > deadline:
                return None
            i = state["next"]
            state["next"] += 1
        start = (i * args.batch) % len(sentences)
        return [sentences[(start + k) % len(sentences)] for k in range(args.batch)]

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
        while True:
            batch = take()
            if batch is None:
                break
            body = json.dumps({"q": batch if args.batch > 1 else batch[0], "source": "auto", "target": args.target})
            began = time.monotonic()
            try:
                connection.request("POST", "/translate", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                payload = response.read()
                ok = response.status == 200 and "translatedText" in json.loads(payload)
                kind = None if ok else f"HTTP {response.status}: {payload[:200].decode(errors='replace')}"
            except (OSError, http.client.HTTPException, ValueError) as e:
                ok = False
                kind = type(e).__name__
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
            elapsed = time.monotonic() - began
            with lock:
                state["done"] += 1
                if ok:
                    state["sentences"] += len(batch)
                    latencies.append(elapsed)
                else:
                    state["errors"] += 1
                    error_kinds[kind] = error_kinds.get(kind, 0) + 1

    cpu_before = os.times()
    began = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    cpu = (os.times().user - cpu_before.user) + (os.times().system - cpu_before.system)
    result = {
        "clients": args.clients, "batch": args.batch, "requests": state["done"], "errors": state["errors"],
        "seconds": wall, "requests_per_second": state["done"] / wall, "sentences_per_second": state["sentences"] / wall,
        "p50_ms": 1000 * percentile(latencies, 50), "p95_ms": 1000 * percentile(latencies, 95),
        "p99_ms": 1000 * percentile(latencies, 99), "generator_cpu_seconds": cpu,
        "generator_cpu_share": cpu / wall, "error_kinds": error_kinds,
    }
    print(f"{args.clients:>3} clients x {args.batch:>2} sentences: {result['requests']} requests in {wall:.1f} s, "
          f"{result['requests_per_second']:.1f} req/s, {result['sentences_per_second']:.1f} sentences/s, "
          f"p50/p95/p99 {result['p50_ms']:.0f}/{result['p95_ms']:.0f}/{result['p99_ms']:.0f} ms, "
          f"{result['errors']} errors, generator CPU {100 * result['generator_cpu_share']:.0f}% of one core"
          + (f" ({error_kinds})" if error_kinds else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
