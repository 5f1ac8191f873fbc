#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""/health latency of an HTTP server while it holds idle or slow connections (standard library).

  connection_probe.py --port P [--idle N] [--slow N] [--requests R] [--json FILE]

Opens N idle connections (from 127.0.0.2-9, a quarter of the per-address bound each) and N slow
ones (a request head dripped a byte every 100 ms), waits 0.5 s, then times R GET /health on
fresh connections one after the other. Prints (and writes) JSON: latency percentiles in ms, how
many /health requests failed, and how many idle connections the server refused or closed.
"""
import argparse
import json
import select
import socket
import statistics
import threading
import time


def connect(port, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def health(port, timeout=10.0):
    start = time.perf_counter()
    s = connect(port)
    s.settimeout(timeout)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return time.perf_counter() - start, data.startswith(b"HTTP/1.1 200")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle", type=int, default=0)
    parser.add_argument("--slow", type=int, default=0)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--json")
    args = parser.parse_args()

    idle = [connect(args.port, f"127.0.0.{2 + i % 8}") for i in range(args.idle)]
    slow = [connect(args.port, f"127.0.0.{2 + i % 8}") for i in range(args.slow)]
    stop = threading.Event()

    def drip():
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 10000
        for i in range(len(head)):
            if stop.is_set():
                return
            for s in slow:
                try:
                    s.send(head[i:i + 1], socket.MSG_DONTWAIT)
                except OSError:
                    pass
            time.sleep(0.1)

    dripper = threading.Thread(target=drip)
    dripper.start()
    time.sleep(0.5)
    latencies, failed = [], 0
    for _ in range(args.requests):
        try:
            seconds, ok = health(args.port)
        except OSError:
            seconds, ok = 10.0, False
        latencies.append(seconds * 1000)
        failed += 0 if ok else 1
    poller = select.poll()
    for s in idle:
        poller.register(s, select.POLLIN)
    readable = poller.poll(0)
    stop.set()
    dripper.join()
    for s in idle + slow:
        s.close()
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    result = {"idle": args.idle, "slow": args.slow, "requests": args.requests, "failed": failed,
              "idle_refused_or_closed": len(readable), "p50_ms": statistics.median(latencies),
              "p95_ms": pick(0.95), "p99_ms": pick(0.99), "max_ms": latencies[-1]}
    print(json.dumps(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
