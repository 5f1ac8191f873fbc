#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic parallel corpus of N pairs made from Multi30k, for scale measurements.

  experiments/measure/make_synthetic_corpus.py N OUT_DIR [--gzip] [--seed S] [--data data/multi30k]

OUT_DIR gets train.de/train.en (.gz with --gzip) and a copy of Multi30k's val files. Each pair
is a random Multi30k training pair, a third of the time joined with a second one, so lengths
vary as in real data and sentences are not verbatim repeats. Deterministic for a seed. Never
commit its output: experiments/measure/large_corpora.sh writes it under runs/scale/.
"""
import argparse
import gzip
import os
import random
import shutil


def read_lines(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", type=int)
    parser.add_argument("out_dir")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", default="data/multi30k")
    args = parser.parse_args()
    src = read_lines(os.path.join(args.data, "train.de.gz"))
    tgt = read_lines(os.path.join(args.data, "train.en.gz"))
    assert len(src) == len(tgt), "Multi30k train files differ in length"
    rng = random.Random(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    suffix = ".gz" if args.gzip else ""
    opener = (lambda p: gzip.open(p, "wt", encoding="utf-8", compresslevel=1)) if args.gzip else (
        lambda p: open(p, "w", encoding="utf-8"))
    partial = {lang: os.path.join(args.out_dir, f".train.{lang}{suffix}.partial") for lang in ("de", "en")}
    n = len(src)
    with opener(partial["de"]) as out_src, opener(partial["en"]) as out_tgt:
        block_src, block_tgt = [], []
        for _ in range(args.pairs):
            i = rng.randrange(n)
            s, t = src[i], tgt[i]
            if rng.random() < 1 / 3:
                j = rng.randrange(n)
                s, t = s + " " + src[j], t + " " + tgt[j]
            block_src.append(s)
            block_tgt.append(t)
            if len(block_src) == 100000:
                out_src.write("\n".join(block_src) + "\n")
                out_tgt.write("\n".join(block_tgt) + "\n")
                block_src, block_tgt = [], []
        if block_src:
            out_src.write("\n".join(block_src) + "\n")
            out_tgt.write("\n".join(block_tgt) + "\n")
    for lang in ("de", "en"):
        os.replace(partial[lang], os.path.join(args.out_dir, f"train.{lang}{suffix}"))
        shutil.copyfile(os.path.join(args.data, f"val.{lang}.gz"), os.path.join(args.out_dir, f"val.{lang}.gz"))


if __name__ == "__main__":
    main()
