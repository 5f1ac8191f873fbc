#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""sacreBLEU 2.6.0's test/test_significance.py, run against nmtzoo-evaluate.

    /usr/bin/python3 scripts/check_sacrebleu_significance_suite.py SACREBLEU_SRC
        [--evaluate build/bin/nmtzoo-evaluate] [--jobs N] [--max-diff TOL]

SACREBLEU_SRC is sacreBLEU 2.6.0's source tree (github.com/mjpost/sacrebleu at tag v2.6.0, with
sacrebleu/version.py written if missing); it needs /usr/bin/python3's numpy 1.24.2 and what sacreBLEU imports
(`scripts/setup.sh --with-sacrebleu`).

test_significance.py checks sacreBLEU's paired significance tests on 16 WMT17 en-de systems
(SACREBLEU_SRC/test/wmt17_en_de_systems.pkl.bz2): the p-value of each system against the first
(the baseline, LIUM-NMT) must be within 1e-2 of Moses' paired bootstrap (2000 resamples) and of
multeval's approximate randomization (10000 trials), for BLEU with `tokenize='none'` and
SACREBLEU_SEED=12345. This script:
  * loads the pickle exactly as test_significance.py does (a list of (name, segments); the last
    entry, popped, is ("reference", [stream, ...])) and writes every system and reference stream to
    a temporary folder, one segment a line (systems under their own names, so that nmtzoo's JSON
    names them as sacreBLEU does). Segments containing a line break (\\n or \\r), a NUL byte or
    trailing whitespace would not survive the text file round trip (nmtzoo, like the sacrebleu
    command, splits lines and strips trailing whitespace); the script stops if it finds any rather
    than alter the data (the WMT17 pickle has none);
  * runs `nmtzoo-evaluate REF -i BASELINE SYS2 ... -m bleu --tokenize none -f json` with
    --paired-bs --paired-bs-n 2000 and SACREBLEU_SEED=12345, then with --paired-ar --paired-ar-n
    10000, and checks each system's p-value against MOSES_P_VALS and MULTEVAL_P_VALS (BLEU) with
    test_significance.py's `abs(p_val - expected_p_val) < 1e-2`;
  * runs sacreBLEU's own PairedTest through its API, as test_significance.py does, on the same
    data, then reports the largest absolute differences between nmtzoo's and sacreBLEU's p-values,
    scores, means and confidence intervals, and the wall time of both (nmtzoo: the whole command,
    process start and file reading included; sacreBLEU: BLEU(references=...) plus PairedTest in
    this process, as in the Python test; the two never run at the same time).
Exits 1 if a p-value of nmtzoo misses its expected value, if nmtzoo fails or names other systems,
or (with --max-diff) if nmtzoo and sacreBLEU differ by more than TOL; 2 on a usage or data problem.

This is not a CI test because its data are sacreBLEU's: the pickled WMT17 system outputs belong to
sacreBLEU's repository and cannot be committed to nmtzoo, so the check runs from a sacreBLEU
checkout by hand.
"""
import argparse
import bz2
import json
import math
import os
import pickle
import re
import subprocess
import sys

import sacrebleu_source
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PICKLE = os.path.join("test", "wmt17_en_de_systems.pkl.bz2")
SEED = "12345"
BS_SAMPLES = 2000
AR_TRIALS = 10000
TOLERANCE = 1e-2  # test_significance.py: assert abs(p_val - expected_p_val) < 1e-2

# The two tables below are copied from sacreBLEU 2.6.0's test/test_significance.py.
# P-values obtained from Moses' significance script (mean of 3 runs)
# Script: scripts/moses-sigdiff.pl (modified to bootstrap samples = 2000)
MOSES_P_VALS = {
    "newstest2017.C-3MA.4959.en-de": 0.00000,
    "newstest2017.FBK.4870.en-de": 0.01267,
    "newstest2017.KIT.4950.en-de": 0.02233,
    "newstest2017.LMU-nmt-reranked.4934.en-de": 0.04383,
    "newstest2017.LMU-nmt-single.4893.en-de": 0.20783,
    "newstest2017.online-A.0.en-de": 0.00000,
    "newstest2017.online-B.0.en-de": 0.38100,
    "newstest2017.online-F.0.en-de": 0.00000,
    "newstest2017.online-G.0.en-de": 0.00000,
    "newstest2017.PROMT-Rule-based.4735.en-de": 0.00000,
    "newstest2017.RWTH-nmt-ensemble.4921.en-de": 0.01167,
    "newstest2017.SYSTRAN.4847.en-de": 0.20983,
    "newstest2017.TALP-UPC.4834.en-de": 0.00000,
    "newstest2017.uedin-nmt.4722.en-de": 0.00000,
    "newstest2017.xmu.4910.en-de": 0.25483,
}

# Obtained from the multeval toolkit, 10,000 AR trials, (BLEU and TER)
# Code: github.com/mjclark/multeval.git
MULTEVAL_P_VALS = {
    "newstest2017.C-3MA.4959.en-de": (0.0001, 0.0001),
    "newstest2017.FBK.4870.en-de": (0.0218, 0.09569),
    "newstest2017.KIT.4950.en-de": (0.0410, 0.0002),
    "newstest2017.LMU-nmt-reranked.4934.en-de": (0.09029, 0.0001),
    "newstest2017.LMU-nmt-single.4893.en-de": (0.58494, 0.0054),
    "newstest2017.online-A.0.en-de": (0.0001, 0.0001),
    "newstest2017.online-B.0.en-de": (0.94111, 0.82242),
    "newstest2017.online-F.0.en-de": (0.0001, 0.0001),
    "newstest2017.online-G.0.en-de": (0.0001, 0.0001),
    "newstest2017.PROMT-Rule-based.4735.en-de": (0.0001, 0.0001),
    "newstest2017.RWTH-nmt-ensemble.4921.en-de": (0.0207, 0.07539),
    "newstest2017.SYSTRAN.4847.en-de": (0.59914, 0.0001),
    "newstest2017.TALP-UPC.4834.en-de": (0.0001, 0.0001),
    "newstest2017.uedin-nmt.4722.en-de": (0.0001, 0.0001),
    "newstest2017.xmu.4910.en-de": (0.71073, 0.0001),
}

# name, nmtzoo options, PairedTest arguments, expected BLEU p-value of a system
TESTS = [
    ("paired bootstrap (BS), 2000 resamples, vs Moses",
     ["--paired-bs", "--paired-bs-n", str(BS_SAMPLES)],
     {"test_type": "bs", "n_samples": BS_SAMPLES},
     lambda name: MOSES_P_VALS[name]),
    ("approximate randomization (AR), 10000 trials, vs multeval",
     ["--paired-ar", "--paired-ar-n", str(AR_TRIALS)],
     {"test_type": "ar", "n_samples": AR_TRIALS},
     lambda name: MULTEVAL_P_VALS[name][0]),
]
FIELDS = ("p_value", "score", "mean", "ci")


def load_systems(source):
    # As test_significance.py's _read_pickle_file(), then `_, refs = named_systems.pop()`.
    with bz2.BZ2File(os.path.join(source, PICKLE), "rb") as f:
        named_systems = pickle.load(f)
    _, refs = named_systems.pop()
    return named_systems, refs


def check_segments(label, segments, expected_count):
    problems = []
    if len(segments) != expected_count:
        problems.append(f"{label}: {len(segments)} segments, not {expected_count}")
    for number, segment in enumerate(segments, 1):
        if not isinstance(segment, str):
            problems.append(f"{label}, segment {number}: a {type(segment).__name__}, not a str")
        elif "\n" in segment or "\r" in segment:
            problems.append(f"{label}, segment {number}: a line break")
        elif "\0" in segment:
            problems.append(f"{label}, segment {number}: a NUL byte")
        elif segment != segment.rstrip():
            problems.append(f"{label}, segment {number}: trailing whitespace")
    return problems


def file_name(index, name):
    # The system's own name when it is a safe file name that cannot pass for an option.
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._+-]*", name) and name not in (".", ".."):
        return name
    return f"system{index:02d}.txt"


def write_lines(path, segments):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for segment in segments:
            f.write(segment + "\n")


def run_nmtzoo(evaluate, system_dir, ref_paths, system_files, options, jobs):
    command = [evaluate, *ref_paths, "-i", *system_files, "-m", "bleu", "--tokenize", "none",
               *options, "--paired-jobs", str(jobs), "-f", "json"]
    environment = dict(os.environ, SACREBLEU_SEED=SEED, NO_COLOR="1")
    environment.pop("SACREBLEU_FORMAT", None)  # it would override -f json
    start = time.perf_counter()
    process = subprocess.run(command, cwd=system_dir, env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    return command, process, seconds


def parse_nmtzoo(stdout, system_files):
    """nmtzoo's JSON rows as {field: value}, in the pickle's order, or an error message."""
    try:
        rows = json.loads(stdout)
    except json.JSONDecodeError as error:
        return None, f"nmtzoo's output is not JSON: {error}"
    expected = [f"Baseline: {system_files[0]}"] + system_files[1:]
    names = [row.get("system") for row in rows] if isinstance(rows, list) else None
    if names != expected:
        return None, f"nmtzoo's systems are {names}, not {expected}"
    results = []
    for row in rows:
        if not isinstance(row.get("BLEU"), dict):
            return None, f"no BLEU object for {row.get('system')!r}: {row}"
        results.append({field: row["BLEU"].get(field) for field in FIELDS})
    return results, None


def run_sacrebleu(named_systems, refs, arguments):
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest, Result

    os.environ["SACREBLEU_SEED"] = SEED
    start = time.perf_counter()
    metrics = {"BLEU": BLEU(references=refs, tokenize="none")}
    _, scores = PairedTest(named_systems, metrics, references=None, **arguments)()
    seconds = time.perf_counter() - start
    assert list(scores["System"]) == [name for name, _ in named_systems]
    results = []
    for result in scores["BLEU"]:
        assert isinstance(result, Result)
        results.append({field: None if getattr(result, field) is None else float(getattr(result, field))
                        for field in FIELDS})
    return results, seconds


def difference(a, b):
    """|a - b|, 0 when both are None, inf when only one is."""
    if a is None or b is None:
        return 0.0 if a is None and b is None else math.inf
    return abs(float(a) - float(b))


def fmt(value, digits=5):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sacrebleu_src", metavar="SACREBLEU_SRC",
                        help="sacreBLEU 2.6.0's source tree (with test/wmt17_en_de_systems.pkl.bz2)")
    parser.add_argument("--evaluate", default=os.path.join(ROOT, "build", "bin", "nmtzoo-evaluate"),
                        help="the nmtzoo-evaluate binary (default: build/bin/nmtzoo-evaluate)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="nmtzoo's --paired-jobs threads (default: 1, as test_significance.py's "
                             "PairedTest, which runs in one process)")
    parser.add_argument("--max-diff", type=float, default=None, metavar="TOL",
                        help="also fail when nmtzoo and sacreBLEU differ by more than TOL in any "
                             "p-value, score, mean or CI (default: only report the differences)")
    args = parser.parse_args()

    source = sacrebleu_source.prepare(args.sacrebleu_src)
    evaluate = os.path.abspath(args.evaluate)
    if not os.path.isfile(os.path.join(source, PICKLE)):
        sys.exit(f"error: no {PICKLE} in {source}")
    if not os.access(evaluate, os.X_OK):
        sys.exit(f"error: {evaluate} is not an executable (build nmtzoo first)")
    import sacrebleu
    print(f"sacreBLEU {sacrebleu.__version__} from {os.path.dirname(sacrebleu.__file__)}")
    version = subprocess.run([evaluate, "--version"], stdout=subprocess.PIPE, text=True).stdout
    print(f"nmtzoo-evaluate: {evaluate} ({version.strip()})")

    named_systems, refs = load_systems(source)
    count = len(refs[0])
    problems = []
    for k, stream in enumerate(refs):
        problems += check_segments(f"reference stream {k + 1}", stream, count)
    for name, segments in named_systems:
        problems += check_segments(name, segments, count)
    system_files = [file_name(i, name) for i, (name, _) in enumerate(named_systems)]
    if len(set(system_files)) != len(system_files):
        problems.append(f"system file names are not unique: {system_files}")
    if problems:
        print("error: the pickle's segments cannot be written one a line unchanged:", file=sys.stderr)
        for problem in problems[:20]:
            print(f"  {problem}", file=sys.stderr)
        sys.exit(2)
    print(f"{len(named_systems)} systems (baseline {named_systems[0][0]}), {len(refs)} reference "
          f"stream(s), {count} segments; no segment has a line break, NUL byte or trailing whitespace")

    failures = []
    max_diffs = {}
    timings = []
    with tempfile.TemporaryDirectory(prefix="nmtzoo-significance-") as folder:
        system_dir = os.path.join(folder, "systems")
        ref_dir = os.path.join(folder, "references")
        os.mkdir(system_dir)
        os.mkdir(ref_dir)
        for file, (_, segments) in zip(system_files, named_systems):
            write_lines(os.path.join(system_dir, file), segments)
        ref_paths = []
        for k, stream in enumerate(refs):
            ref_paths.append(os.path.join(ref_dir, f"reference{k + 1}.txt"))
            write_lines(ref_paths[-1], stream)

        for title, options, arguments, expected_of in TESTS:
            print(f"\n=== {title} ===")
            # One after the other, never at the same time.
            command, process, nmtzoo_seconds = run_nmtzoo(evaluate, system_dir, ref_paths,
                                                          system_files, options, args.jobs)
            print("$ SACREBLEU_SEED=" + SEED + " " + " ".join(
                [os.path.relpath(evaluate, ROOT) if evaluate.startswith(ROOT) else evaluate]
                + command[1:]))
            print(f"nmtzoo:    {nmtzoo_seconds:8.2f} s wall (--paired-jobs {args.jobs})")
            nmtzoo = None
            if process.returncode != 0:
                failures.append(f"{title}: nmtzoo-evaluate exited with {process.returncode}: "
                                f"{process.stderr.decode(errors='replace').strip()}")
            else:
                nmtzoo, error = parse_nmtzoo(process.stdout, system_files)
                if error:
                    failures.append(f"{title}: {error}")
            sacre, sacre_seconds = run_sacrebleu(named_systems, refs, arguments)
            print(f"sacreBLEU: {sacre_seconds:8.2f} s wall (PairedTest, n_jobs=1)")
            timings.append((title, nmtzoo_seconds, sacre_seconds))
            if nmtzoo is None:
                print("no nmtzoo results: " + failures[-1])
                continue

            # As test_significance.py: p-values of the systems that have one, 0.0 when absent.
            nmtzoo_p = {name: r["p_value"] for (name, _), r in zip(named_systems, nmtzoo)
                        if r["p_value"] is not None}
            sacre_p = {name: r["p_value"] for (name, _), r in zip(named_systems, sacre)
                       if r["p_value"] is not None}
            width = max(len(name) for name, _ in named_systems)
            header = (f"{'system':<{width}}  {'expected':>8}  {'nmtzoo':>8}  {'sacreBLEU':>9}  "
                      f"{'|nmtzoo-sacreBLEU|':>18}  ok")
            print(header)
            print("-" * len(header))
            for i, (name, _) in enumerate(named_systems):
                if i == 0:
                    print(f"{name:<{width}}  {'baseline':>8}  {fmt(nmtzoo[0]['p_value']):>8}  "
                          f"{fmt(sacre[0]['p_value']):>9}  {'':>18}  -")
                    continue
                if name not in MOSES_P_VALS:
                    print(f"{name:<{width}}  {'-':>8}  {fmt(nmtzoo_p.get(name)):>8}  "
                          f"{fmt(sacre_p.get(name)):>9}  (not in the tables)")
                    continue
                expected = expected_of(name)
                p = nmtzoo_p.get(name, 0.0)
                ok = abs(p - expected) < TOLERANCE
                sacre_ok = abs(sacre_p.get(name, 0.0) - expected) < TOLERANCE
                diff = difference(nmtzoo[i]["p_value"], sacre[i]["p_value"])
                print(f"{name:<{width}}  {expected:8.5f}  {p:8.5f}  {sacre_p.get(name, 0.0):9.5f}  "
                      f"{diff:18.3g}  {'ok' if ok else 'FAIL'}"
                      + ("" if sacre_ok else "  (sacreBLEU misses it too)"))
                if not ok:
                    failures.append(f"{title}: {name}: nmtzoo's p-value {p} is not within "
                                    f"{TOLERANCE} of {expected}")
            for name in set(MOSES_P_VALS) - {n for n, _ in named_systems[1:]}:
                failures.append(f"{title}: {name} of the tables is not among the systems")

            print("largest |nmtzoo - sacreBLEU| over the systems:")
            for field in FIELDS:
                worst, where = 0.0, None
                for (name, _), a, b in zip(named_systems, nmtzoo, sacre):
                    d = difference(a[field], b[field])
                    if where is None or d > worst:
                        worst, where = d, name
                present = sum(r[field] is not None for r in sacre)
                where_text = "equal for every system" if worst == 0 else where
                print(f"  {field:<8} {worst:.3g}  ({where_text}; {present} of {len(sacre)} "
                      f"systems have one)")
                max_diffs[(title, field)] = worst
                if args.max_diff is not None and worst > args.max_diff:
                    failures.append(f"{title}: {field} differs from sacreBLEU's by {worst:.3g} "
                                    f"({where}) > {args.max_diff}")

    print("\nwall time (s):")
    for title, nmtzoo_seconds, sacre_seconds in timings:
        print(f"  {title}: nmtzoo {nmtzoo_seconds:.2f}, sacreBLEU {sacre_seconds:.2f} "
              f"({sacre_seconds / nmtzoo_seconds:.1f}x)")
    if max_diffs:
        print(f"largest |nmtzoo - sacreBLEU| of all: {max(max_diffs.values()):.3g}")
    if failures:
        print(f"\nFAILED ({len(failures)}):")
        for failure in failures:
            print(f"  {failure}")
        sys.exit(1)
    print("\nall p-values within 1e-2 of Moses and multeval, as test_significance.py requires")


if __name__ == "__main__":
    main()
