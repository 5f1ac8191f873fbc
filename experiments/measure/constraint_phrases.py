#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Lexical-constraint test material from a test set, and how many constraints an output met.

  constraint_phrases.py make SOURCE REFERENCE OUT.tsv [--seed 1]
      For each sentence, 1 or 2 phrases of 1-3 words taken at random (seeded) from its reference,
      not overlapping, in the order they occur in the reference (so --constraints ordered holds
      for the reference), written as nmtzoo-translate tsv input: source<TAB><TAB>phrase<TAB>phrase.
  constraint_phrases.py count CONSTRAINTS.tsv OUTPUT
      Prints "met total" over all constraints: a constraint is met when its text occurs in the
      detokenized output line (its token sequence is then in the output too, as nmtzoo's search
      only counts contiguous token matches).
Inputs may be gzipped. Uses only the standard library.
"""
import gzip
import random
import sys


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def make(source, reference, out, seed):
    rng = random.Random(seed)
    sources, references = read_lines(source), read_lines(reference)
    if len(sources) != len(references):
        sys.exit(f"{source} has {len(sources)} lines but {reference} has {len(references)}")
    rows = []
    for src, ref in zip(sources, references):
        words = ref.split()
        phrases = []  # (start, text)
        taken = set()
        for _ in range(rng.choice([1, 2])):
            for _attempt in range(10):
                length = rng.randint(1, min(3, len(words)))
                start = rng.randint(0, len(words) - length)
                span = set(range(start, start + length))
                if not span & taken:
                    taken |= span
                    phrases.append((start, " ".join(words[start:start + length])))
                    break
        rows.append("\t".join([src, ""] + [text for _, text in sorted(phrases)]))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")


def count(constraints, output):
    rows, outputs = read_lines(constraints), read_lines(output)
    if len(rows) != len(outputs):
        sys.exit(f"{constraints} has {len(rows)} lines but {output} has {len(outputs)}")
    met = total = 0
    for row, hyp in zip(rows, outputs):
        for phrase in row.split("\t")[2:]:
            if phrase:
                total += 1
                met += phrase in hyp
    print(met, total)


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "make":
        seed = int(sys.argv[6]) if len(sys.argv) >= 7 and sys.argv[5] == "--seed" else 1
        make(sys.argv[2], sys.argv[3], sys.argv[4], seed)
    elif len(sys.argv) == 4 and sys.argv[1] == "count":
        count(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
