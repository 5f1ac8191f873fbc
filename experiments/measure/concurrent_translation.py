#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sentences/s of one Translator shared by Python threads, one sentence a call (batch 1).

  concurrent_translation.py CHECKPOINT SENTENCES_FILE [--sentences N] [--rounds R] [--json FILE]

Runs, R times in turn: 1 thread with threads=1, 1 thread with threads=2 (LibTorch's intra-op
threads), 2 threads with threads=1 each; every run translates the same N sentences (split
between the threads) and its outputs are checked against the first run's, byte for byte.
"""
import argparse
import json
import sys
import threading
import time

import nmtzoo
import torch


def run(translator, sentences, workers):
    outputs = [None] * len(sentences)

    def work(start):
        for i in range(start, len(sentences), workers):
            outputs[i] = translator.translate_batch([sentences[i]])[0].hypotheses[0]

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, outputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("sentences_file")
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    sentences = open(args.sentences_file, encoding="utf-8").read().splitlines()[:args.sentences]
    translator = nmtzoo.Translator(args.checkpoint, threads=1)
    run(translator, sentences[:20], 1)  # warm-up
    reference = None
    results = []
    for rnd in range(1, args.rounds + 1):
        for workers, intra in ((1, 1), (1, 2), (2, 1)):
            torch.set_num_threads(intra)
            seconds, outputs = run(translator, sentences, workers)
            reference = reference or outputs
            row = {"round": rnd, "python_threads": workers, "intra_op_threads": intra, "seconds": seconds,
                   "sentences_per_second": len(sentences) / seconds, "identical": outputs == reference}
            results.append(row)
            print(json.dumps(row), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
