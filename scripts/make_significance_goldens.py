#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Golden outputs of sacreBLEU 2.6.0's statistical tests, for tests/metrics/significance_test.cpp.

    /usr/bin/python3 scripts/make_significance_goldens.py SACREBLEU_SRC

SACREBLEU_SRC is a checkout of github.com/mjpost/sacrebleu at tag v2.6.0 (its sacrebleu/version.py
is written at install time; this script writes it when missing). It needs Debian 12's numpy 1.24.2
and what sacreBLEU imports (`scripts/setup.sh --with-sacrebleu`); the tests need none of it.

It runs the sacrebleu command itself (colours off, default seed unless a case sets SACREBLEU_SEED)
in tests/data/sacrebleu/significance/ and stores each case's standard output byte for byte as
<case>.out, with the cases, their arguments and sacreBLEU's wall time in cases.json:
  * the four zoo models' test_2016_flickr outputs of round 1 (reports/multi30k_de_en_round1/*/
    test_2016_flickr.hyp at commit 4eb056b, copied here gzipped) against data/multi30k/test_2016_flickr.en.gz: paired bootstrap, paired
    approximate randomization, confidence intervals, BLEU + chrF2 + TER, text and JSON;
  * three systems of 170 segments against two reference streams with empty lines (../ref1.txt,
    ../ref2.txt): other seeds, sample counts, widths and metric options (chrF++, TER flags).
"""
import gzip
import json
import os
import subprocess
import sys

import sacrebleu_source
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "sacrebleu")
OUT = os.path.join(DATA, "significance")
MULTI30K_REF = os.path.join(ROOT, "data", "multi30k", "test_2016_flickr.en.gz")
ZOO = ["transformer.hyp.gz", "rnn.hyp.gz", "rnn_luong.hyp.gz", "rnn_encdec.hyp.gz"]
MULTIREF_SYSTEMS = ["multiref_a.txt", "multiref_b.txt", "multiref_c.txt"]
ALL_METRICS = ["-m", "bleu", "chrf", "ter"]

# name, reference files (relative to ROOT or to OUT), arguments, environment
CASES = [
    ("zoo_paired_bs_text", "multi30k", ["-i", *ZOO, *ALL_METRICS, "--paired-bs", "-f", "text"], {}),
    ("zoo_paired_bs_json", "multi30k", ["-i", *ZOO, *ALL_METRICS, "--paired-bs", "-f", "json"], {}),
    ("zoo_paired_bs_3systems_text", "multi30k",
     ["-i", *ZOO[:3], *ALL_METRICS, "--paired-bs", "-f", "text"], {}),
    ("zoo_paired_ar_text", "multi30k", ["-i", *ZOO, *ALL_METRICS, "--paired-ar", "-f", "text"], {}),
    ("zoo_paired_ar_json", "multi30k", ["-i", *ZOO, *ALL_METRICS, "--paired-ar", "-f", "json"], {}),
    ("zoo_confidence_text", "multi30k", ["-i", ZOO[0], *ALL_METRICS, "--confidence", "-f", "text"], {}),
    ("zoo_confidence_json", "multi30k", ["-i", ZOO[0], *ALL_METRICS, "--confidence", "-f", "json"], {}),
    ("zoo_confidence_bleu_text", "multi30k", ["-i", ZOO[1], "--confidence", "-f", "text"], {}),
    ("zoo_systems_text", "multi30k", ["-i", *ZOO, *ALL_METRICS, "-f", "text"], {}),
    ("zoo_systems_json", "multi30k", ["-i", *ZOO, *ALL_METRICS, "-f", "json"], {}),
    ("multiref_paired_bs_text", "multiref",
     ["-i", *MULTIREF_SYSTEMS, *ALL_METRICS, "-cw", "2", "--ter-normalized", "--paired-bs",
      "--paired-bs-n", "300", "-w", "2", "-f", "text"], {"SACREBLEU_SEED": "7"}),
    ("multiref_paired_bs_json", "multiref",
     ["-i", *MULTIREF_SYSTEMS, *ALL_METRICS, "-cw", "2", "--ter-normalized", "--paired-bs",
      "--paired-bs-n", "300", "-w", "2", "-f", "json"], {"SACREBLEU_SEED": "7"}),
    ("multiref_paired_ar_text", "multiref",
     ["-i", *MULTIREF_SYSTEMS, *ALL_METRICS, "-lc", "--ter-case-sensitive", "--ter-no-punct",
      "--paired-ar", "--paired-ar-n", "2001", "-f", "text"], {}),
    ("multiref_paired_ar_json", "multiref",
     ["-i", *MULTIREF_SYSTEMS, *ALL_METRICS, "-lc", "--ter-case-sensitive", "--ter-no-punct",
      "--paired-ar", "--paired-ar-n", "2001", "-f", "json"], {}),
    ("multiref_confidence_text", "multiref",
     ["-i", MULTIREF_SYSTEMS[1], *ALL_METRICS, "--confidence", "--confidence-n", "501", "-w", "3",
      "-f", "text"], {"SACREBLEU_SEED": "2026"}),
    ("multiref_confidence_json", "multiref",
     ["-i", MULTIREF_SYSTEMS[1], *ALL_METRICS, "--confidence", "--confidence-n", "501", "-w", "3",
      "-f", "json"], {"SACREBLEU_SEED": "2026"}),
]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def make_multiref_systems():
    # Deterministic systems over the 170 segments of ../hyp.txt: the hypotheses themselves, the
    # transformer's first 150 outputs with the Chinese hypotheses, and the second reference stream.
    hyp = read_lines(os.path.join(DATA, "hyp.txt"))
    ref2 = read_lines(os.path.join(DATA, "ref2.txt"))
    with gzip.open(os.path.join(OUT, "transformer.hyp.gz"), "rt", encoding="utf-8") as f:
        transformer = [line.rstrip("\n") for line in f][:150]
    systems = [hyp, transformer + hyp[150:], ref2]
    for name, lines in zip(MULTIREF_SYSTEMS, systems):
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = sacrebleu_source.prepare(sys.argv[1])
    make_multiref_systems()
    references = {"multi30k": [MULTI30K_REF],
                  "multiref": [os.path.join(DATA, "ref1.txt"), os.path.join(DATA, "ref2.txt")]}
    manifest = []
    for name, refs, args, env in CASES:
        environment = dict(os.environ, PYTHONPATH=source, NO_COLOR="1", **env)
        environment.pop("SACREBLEU_FORMAT", None)
        if "SACREBLEU_SEED" not in env:
            environment.pop("SACREBLEU_SEED", None)
        command = ["/usr/bin/python3", "-m", "sacrebleu", *references[refs], *args, "-q"]
        start = time.perf_counter()
        out = subprocess.run(command, cwd=OUT, env=environment, check=True,
                             stdout=subprocess.PIPE).stdout
        seconds = time.perf_counter() - start
        with open(os.path.join(OUT, name + ".out"), "wb") as f:
            f.write(out)
        manifest.append({"name": name, "references": refs, "args": args + ["-q"], "env": env,
                         "sacrebleu_seconds": round(seconds, 3)})
        print(f"{name}: {seconds:.2f} s")
    with open(os.path.join(OUT, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
