# SPDX-License-Identifier: MIT
"""nmtzoo.metrics against sacreBLEU 2.6.0's own output.

The goldens are the ones the C++ tests use (tests/metrics/sacrebleu_goldens.h points at
tests/data/sacrebleu/): bleu_chrf_goldens.jsonl and ter_goldens.jsonl (scripts/
make_sacrebleu_goldens.py) and significance/ (scripts/make_significance_goldens.py). Numbers are
compared within 1e-9, as the C++ tests do; text is compared exactly, except that nmtzoo's
signatures say version:2.6.0+nmtzoo where sacreBLEU's say version:2.6.0.

Run with /usr/bin/python3 -m unittest, PYTHONPATH at the build's assembled nmtzoo package.
"""

import json
import logging
import os
import re
import unittest

from nmtzoo import metrics
from nmtzoo.metrics import BLEU, CHRF, TER
from nmtzoo.metrics.significance import PairedTest, Result, estimate_ci

SOURCE_DIR = os.environ.get(
    "NMTZOO_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
GOLDENS = os.path.join(SOURCE_DIR, "tests", "data", "sacrebleu")
SIGNIFICANCE = os.path.join(GOLDENS, "significance")
EPS = 1e-9
METRIC_CLASSES = {"bleu": BLEU, "chrf": CHRF, "ter": TER}


def read_stream(path):
    # As sacrebleu.py reads files (and sacrebleu_goldens.h's read_stream): lines right-stripped.
    with open(path, encoding="utf-8") as f:
        return [line.rstrip() for line in f]


def marked(text):
    """sacreBLEU's text with nmtzoo's signature version."""
    return re.sub(r"\b(version|v):2\.6\.0\b(?!\+)", r"\1:2.6.0+nmtzoo", text)


def read_jsonl(name):
    with open(os.path.join(GOLDENS, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


HYPS = read_stream(os.path.join(GOLDENS, "hyp.txt"))
REF_SETS = {"ref1": [read_stream(os.path.join(GOLDENS, "ref1.txt"))],
            "ref1+ref2": [read_stream(os.path.join(GOLDENS, "ref1.txt")),
                          read_stream(os.path.join(GOLDENS, "ref2.txt"))]}


class SeedEnvironment:
    """Sets (or unsets, with None) SACREBLEU_SEED for a block."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.saved = os.environ.pop("SACREBLEU_SEED", None)
        if self.value is not None:
            os.environ["SACREBLEU_SEED"] = self.value

    def __exit__(self, *exc):
        os.environ.pop("SACREBLEU_SEED", None)
        if self.saved is not None:
            os.environ["SACREBLEU_SEED"] = self.saved


class GoldenScores(unittest.TestCase):
    """Corpus scores, score lines, signatures and sentence scores of every golden case."""

    def check_case(self, case, metric_name):
        label = f"{metric_name} {case['options']} {case['refs']}"
        refs = REF_SETS[case["refs"]]
        metric = METRIC_CLASSES[metric_name](**case["options"])
        score = metric.corpus_score(HYPS, refs)
        self.assertAlmostEqual(score.score, case["score"], delta=EPS, msg=label)
        signature = metric.get_signature()
        self.assertEqual(score.format(width=2, signature=signature.format()),
                         marked(case["line"]), label)
        if "short_signature" in case:
            self.assertEqual(signature.format(short=True), marked(case["short_signature"]), label)
        for i, (hyp, expected) in enumerate(zip(HYPS, case["sentence_scores"])):
            self.assertAlmostEqual(metric.sentence_score(hyp, [r[i] for r in refs]).score,
                                   expected, delta=EPS, msg=f"{label} segment {i}")

    def test_bleu_and_chrf_goldens(self):
        logging.getLogger("nmtzoo.metrics").setLevel(logging.ERROR)  # effective_order advice
        cases = read_jsonl("bleu_chrf_goldens.jsonl")
        self.assertEqual(len(cases), 46)
        for case in cases:
            self.check_case(case, case["metric"])

    def test_ter_goldens(self):
        cases = [c for c in read_jsonl("ter_goldens.jsonl") if c["kind"] == "score"]
        self.assertEqual(len(cases), 32)
        for case in cases:
            self.check_case(case, "ter")
            score = TER(**case["options"]).corpus_score(HYPS, REF_SETS[case["refs"]])
            self.assertEqual(score.num_edits, case["num_edits"])
            self.assertAlmostEqual(score.ref_length, case["ref_length"], delta=EPS)

    def test_ter_tokenizer_goldens(self):
        for case in read_jsonl("ter_goldens.jsonl"):
            if case["kind"] != "tokenize":
                continue
            tokenizer = TER(**case["options"]).tokenizer
            for text, expected in zip(case["inputs"], case["outputs"]):
                self.assertEqual(tokenizer(text), expected, f"{case['options']} {text!r}")


class ScoreObjects(unittest.TestCase):
    """Fields and Score.format, on the first golden BLEU case (13a, ref1): BLEU = 36.85
    88.4/68.4/46.8/25.7 (BP = 0.710 ratio = 0.745 hyp_len = 1345 ref_len = 1806)."""

    def setUp(self):
        self.bleu = BLEU()
        self.score = self.bleu.corpus_score(HYPS, REF_SETS["ref1"])

    def test_bleu_fields(self):
        s = self.score
        self.assertEqual((s.sys_len, s.ref_len), (1345, 1806))
        self.assertEqual(len(s.counts), 4)
        self.assertEqual(s.totals[0], 1345)
        for count, total, precision in zip(s.counts, s.totals, s.precisions):
            self.assertIsInstance(count, int)
            self.assertAlmostEqual(precision, 100.0 * count / total, delta=1e-12)
        self.assertEqual(s.prec_str, "88.4/68.4/46.8/25.7")
        self.assertEqual(f"{s.bp:.3f}", "0.710")
        self.assertEqual(s.ratio, 1345 / 1806)
        self.assertEqual(s.name, "BLEU")

    def test_format(self):
        s = self.score
        self.assertEqual(s.format(), "BLEU = 36.85 88.4/68.4/46.8/25.7 (BP = 0.710 ratio = 0.745 "
                                     "hyp_len = 1345 ref_len = 1806)")
        self.assertEqual(str(s), s.format())
        self.assertEqual(repr(s), s.format())
        self.assertEqual(s.format(width=1, score_only=True), "36.9")
        self.assertEqual(s.format(width=4, score_only=True), f"{s.score:.4f}")
        signature = str(self.bleu.get_signature())
        record = json.loads(s.format(signature=signature, is_json=True))
        self.assertEqual(list(record), ["name", "score", "signature", "verbose_score", "nrefs",
                                        "case", "eff", "tok", "smooth", "version"])
        self.assertEqual(record["score"], 36.85)
        self.assertEqual(record["version"], "2.6.0+nmtzoo")
        with self.assertRaises(ValueError):  # as sacreBLEU: JSON needs a signature
            s.format(is_json=True)

    def test_chrf_and_ter_fields(self):
        chrf = CHRF(word_order=2).corpus_score(HYPS, REF_SETS["ref1"])
        self.assertEqual((chrf.name, chrf.char_order, chrf.word_order, chrf.beta),
                         ("chrF2++", 6, 2, 2))
        self.assertEqual(chrf.format(), "chrF2++ = 61.19")
        ter = TER().corpus_score(HYPS, REF_SETS["ref1"])
        self.assertIsInstance(ter.num_edits, int)
        self.assertEqual(ter.format(width=1), "TER = 38.9")

    def test_signatures(self):
        sig = self.bleu.get_signature()
        self.assertEqual(sig.format(),
                         "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0+nmtzoo")
        self.assertEqual(sig.format(short=True),
                         "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0+nmtzoo")
        sig.update("test", "wmt20")
        self.assertEqual(str(sig), "nrefs:1|test:wmt20|case:mixed|eff:no|tok:13a|smooth:exp|"
                                   "version:2.6.0+nmtzoo")
        floor = BLEU(smooth_method="floor", lowercase=True, effective_order=True)
        floor.corpus_score(HYPS, REF_SETS["ref1+ref2"])
        self.assertEqual(str(floor.get_signature()),
                         "nrefs:2|case:lc|eff:yes|tok:13a|smooth:floor[0.10]|version:2.6.0+nmtzoo")
        chrf = CHRF(whitespace=True, eps_smoothing=True)
        chrf.corpus_score(HYPS, REF_SETS["ref1"])
        self.assertEqual(chrf.get_signature().format(short=True),
                         "#:1|c:mixed|e:no|nc:6|nw:0|s:yes|v:2.6.0+nmtzoo")

    def test_add_k_counts_are_shown_smoothed_as_in_sacrebleu(self):
        plain = BLEU(smooth_method="none").corpus_score(HYPS, REF_SETS["ref1"])
        add_k = BLEU(smooth_method="add-k").corpus_score(HYPS, REF_SETS["ref1"])
        self.assertEqual(add_k.counts, [plain.counts[0]] + [c + 1 for c in plain.counts[1:]])
        self.assertEqual(add_k.totals, [plain.totals[0]] + [t + 1 for t in plain.totals[1:]])


class MetricUse(unittest.TestCase):
    def test_cached_references_give_the_same_scores(self):
        for cls in (BLEU, CHRF, TER):
            direct = cls().corpus_score(HYPS, REF_SETS["ref1+ref2"])
            cached = cls(references=REF_SETS["ref1+ref2"]).corpus_score(HYPS, None)
            self.assertEqual(direct.score, cached.score, cls.__name__)

    def test_sentence_score_is_a_one_segment_corpus(self):
        refs = [r[3] for r in REF_SETS["ref1+ref2"]]
        for metric in (BLEU(effective_order=True), CHRF(), TER()):
            self.assertEqual(metric.sentence_score(HYPS[3], refs).score,
                             metric.corpus_score([HYPS[3]], [[r] for r in refs]).score)

    def test_compat_functions(self):
        refs = REF_SETS["ref1"]
        self.assertEqual(metrics.corpus_bleu(HYPS, refs).score, BLEU().corpus_score(HYPS, refs).score)
        self.assertEqual(metrics.sentence_bleu(HYPS[0], [refs[0][0]]).score,
                         BLEU(effective_order=True).sentence_score(HYPS[0], [refs[0][0]]).score)
        self.assertEqual(metrics.raw_corpus_bleu(HYPS, refs).score,
                         BLEU(tokenize="none", smooth_method="floor", effective_order=True)
                         .corpus_score(HYPS, refs).score)
        self.assertEqual(metrics.corpus_chrf(HYPS, refs, word_order=2).score,
                         CHRF(word_order=2).corpus_score(HYPS, refs).score)
        self.assertEqual(metrics.sentence_chrf(HYPS[1], [refs[0][1]]).score,
                         CHRF().sentence_score(HYPS[1], [refs[0][1]]).score)
        self.assertEqual(metrics.corpus_ter(HYPS, refs, normalized=True).score,
                         TER(normalized=True).corpus_score(HYPS, refs).score)
        self.assertEqual(metrics.sentence_ter(HYPS[2], [refs[0][2]]).score,
                         TER().sentence_score(HYPS[2], [refs[0][2]]).score)

    def test_none_references_make_a_variable_number(self):
        ref1, ref2 = REF_SETS["ref1+ref2"]
        holes = [None if i % 2 else r for i, r in enumerate(ref2)]
        bleu = BLEU()
        score = bleu.corpus_score(HYPS, [ref1, holes])
        self.assertEqual(bleu.get_signature().info["nrefs"], "var")
        self.assertTrue(str(bleu.get_signature()).startswith("nrefs:var|"))
        odd = [i for i in range(len(HYPS)) if i % 2]
        self.assertGreater(score.score, 0)
        # Segments whose second reference is None score as with ref1 alone.
        only = BLEU().corpus_score([HYPS[i] for i in odd], [[ref1[i] for i in odd]])
        mixed = BLEU().corpus_score([HYPS[i] for i in odd], [[ref1[i] for i in odd],
                                                             [holes[i] for i in odd]])
        self.assertEqual(only.score, mixed.score)


class ArgumentErrors(unittest.TestCase):
    """sacreBLEU's exception types and messages, and nmtzoo's limits."""

    def test_constructor_errors(self):
        with self.assertRaisesRegex(AssertionError, "Unknown smooth_method"):
            BLEU(smooth_method="laplace")
        with self.assertRaises(KeyError):
            BLEU(tokenize="moses")
        for unsupported in ("ja-mecab", "ko-mecab", "spm", "flores200"):
            with self.assertRaises(NotImplementedError, msg=unsupported):
                BLEU(tokenize=unsupported)
        with self.assertRaises(NotImplementedError):
            BLEU(trg_lang="ja")  # picks ja-mecab
        self.assertEqual(BLEU(trg_lang="zh").tokenizer_signature, "zh")
        with self.assertRaises(NotImplementedError):
            BLEU(max_ngram_order=3)
        with self.assertRaises(ValueError):
            CHRF(char_order=0, word_order=0)
        with self.assertRaisesRegex(AssertionError, "Unknown test type 'xx'"):
            PairedTest([("a", HYPS), ("b", HYPS)], {"BLEU": BLEU()}, REF_SETS["ref1"],
                       test_type="xx")

    def test_call_errors(self):
        bleu = BLEU()
        with self.assertRaisesRegex(ValueError, "Number of references unknown"):
            bleu.get_signature()
        with self.assertRaisesRegex(RuntimeError, "No references provided and the cache is empty"):
            bleu.corpus_score(HYPS, None)
        with self.assertRaisesRegex(TypeError, r"^BLEU: Each element of `hyps` should be a string\.$"):
            bleu.corpus_score([1, 2], REF_SETS["ref1"])
        with self.assertRaisesRegex(TypeError, r"^TER: Undefined line in hypotheses stream!$"):
            TER().corpus_score(["a", None], [["a", "b"]])
        with self.assertRaisesRegex(TypeError, r"^CHRF: Each element of `refs` should be a "
                                               r"sequence of strings\.$"):
            CHRF().corpus_score(["a"], [1])
        with self.assertRaisesRegex(TypeError, r"^BLEU: The argument `hyp` should be a string\.$"):
            bleu.sentence_score(["a"], ["a"])
        with self.assertRaisesRegex(TypeError, r"^BLEU: The argument `refs` should be a sequence "
                                               r"of strings\.$"):
            bleu.sentence_score("a", "a")

    def test_what_sacrebleu_lets_through_is_refused(self):
        # Each of these was scored (or raised IndexError) before: sacreBLEU zips the streams and
        # iterates a str; nmtzoo raises with sacreBLEU's types and wording.
        bleu = BLEU()
        with self.assertRaisesRegex(EOFError, r"^Source and reference streams have different "
                                              r"lengths!$"):
            bleu.corpus_score(HYPS[:3], [REF_SETS["ref1"][0][:2]])
        with self.assertRaisesRegex(EOFError, "different lengths"):
            CHRF().corpus_score(HYPS[:2], [REF_SETS["ref1"][0][:3]])
        with self.assertRaisesRegex(EOFError, "different lengths"):  # cached by the constructor
            BLEU(references=[REF_SETS["ref1"][0][:3]]).corpus_score(HYPS[:2], None)
        with self.assertRaisesRegex(ValueError, r"^BLEU: `refs` should not be empty"):
            bleu.corpus_score(["a"], [])
        with self.assertRaisesRegex(TypeError, r"^BLEU: `hyps` should be a sequence of strings\.$"):
            bleu.corpus_score("the cat", [["the cat"]])
        with self.assertRaisesRegex(TypeError, r"^TER: Each element of `refs` should be a sequence "
                                               r"of strings\.$"):
            TER().corpus_score(["a b"], ["a b"])
        with self.assertRaisesRegex(ValueError, r"^BLEU: `hyps` should not be empty\.$"):
            bleu.corpus_score([], [[]])
        with self.assertRaisesRegex(ValueError, r"^BLEU: a stream of `refs` is empty\.$"):
            bleu.corpus_score(["a"], [[]])
        with self.assertRaisesRegex(ValueError, r"^BLEU: The argument `refs` should not be "
                                                r"empty\.$"):
            bleu.sentence_score("a", [])
        with self.assertRaisesRegex(AssertionError, r"^Unknown smooth_method 'laplace'$"):
            BLEU(smooth_method="laplace")

    def test_resamples_are_bounded(self):
        with self.assertRaisesRegex(ValueError, r"^PairedTest: `n_samples` is 1000000000; at most "
                                                r"1000000 are allowed\.$"):
            PairedTest([("a", HYPS), ("b", HYPS)], {"BLEU": BLEU()}, REF_SETS["ref1"],
                       test_type="bs", n_samples=10**9)
        with self.assertRaisesRegex(ValueError, "`n_bootstrap` is 2000000"):
            BLEU().corpus_score(HYPS, REF_SETS["ref1"], n_bootstrap=2_000_000)
        with self.assertRaisesRegex(TypeError, "`n_bootstrap` should be an integer, not float"):
            BLEU().corpus_score(HYPS, REF_SETS["ref1"], n_bootstrap=100.0)


class Bootstrap(unittest.TestCase):
    """corpus_score(n_bootstrap=501) with SACREBLEU_SEED=2026: significance/multiref_confidence_*
    (sacrebleu -i multiref_b.txt -m bleu chrf ter --confidence --confidence-n 501 -w 3)."""

    def test_confidence_matches_sacrebleu(self):
        with open(os.path.join(SIGNIFICANCE, "multiref_confidence_json.out"), encoding="utf-8") as f:
            expected = json.load(f)
        with open(os.path.join(SIGNIFICANCE, "multiref_confidence_text.out"), encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        hyps = read_stream(os.path.join(SIGNIFICANCE, "multiref_b.txt"))
        with SeedEnvironment("2026"):
            for metric, want, line in zip((BLEU(), CHRF(), TER()), expected, lines):
                score = metric.corpus_score(hyps, REF_SETS["ref1+ref2"], n_bootstrap=501)
                signature = str(metric.get_signature())
                self.assertEqual(score.format(width=3, signature=signature), marked(line))
                got = json.loads(score.format(width=3, signature=signature, is_json=True))
                self.assertEqual(list(got), list(want))
                for key, value in want.items():
                    self.assertEqual(got[key], marked(value) if key == "signature" else
                                     ("2.6.0+nmtzoo" if key == "version" else value), key)

    def test_seed_none_and_estimate_ci(self):
        with SeedEnvironment("None"):
            bleu = BLEU()
            score = bleu.corpus_score(HYPS, REF_SETS["ref1"], n_bootstrap=50)
            self.assertIn("|bs:50|seed:none|", str(bleu.get_signature()))
            self.assertGreater(score._mean, 0)
        mean, ci = estimate_ci([float(x) for x in range(80)])
        self.assertEqual((mean, ci), (39.5, 0.5 * (77 - 2)))


class PairedTests(unittest.TestCase):
    """Paired tests on the three 170-segment systems of significance/ against ref1+ref2."""

    @classmethod
    def setUpClass(cls):
        cls.systems = [(name, read_stream(os.path.join(SIGNIFICANCE, name)))
                       for name in ("multiref_a.txt", "multiref_b.txt", "multiref_c.txt")]

    def check(self, golden_name, metrics_by_name, test_type, n_samples, seed):
        with open(os.path.join(SIGNIFICANCE, golden_name + "_json.out"), encoding="utf-8") as f:
            expected = json.load(f)
        with open(os.path.join(SIGNIFICANCE, golden_name + "_text.out"), encoding="utf-8") as f:
            expected_signatures = {line.split()[1]: line.split()[2] for line in f
                                   if line.startswith(" - ") and "|" in line}
        with SeedEnvironment(seed):
            test = PairedTest(self.systems, metrics_by_name, REF_SETS["ref1+ref2"],
                              test_type=test_type, n_samples=n_samples)
            signatures, scores = test()
        self.assertEqual(scores["System"], [name for name, _ in self.systems])
        self.assertEqual(list(scores)[1:], [name for name in expected[0] if name != "system"])
        for name, signature in signatures.items():
            self.assertEqual(str(signature), marked(expected_signatures[name]), name)
        for s, system in enumerate(expected):
            for name, want in system.items():
                if name == "system":
                    continue
                got = scores[name][s]
                self.assertIsInstance(got, Result)
                for field in ("score", "p_value", "mean", "ci"):
                    label = f"{golden_name} {system['system']} {name} {field}"
                    if want[field] is None:
                        self.assertIsNone(getattr(got, field), label)
                    else:
                        self.assertAlmostEqual(getattr(got, field), want[field], delta=EPS,
                                               msg=label)

    def test_paired_bootstrap_matches_sacrebleu(self):
        # sacrebleu -m bleu chrf ter -cw 2 --ter-normalized --paired-bs --paired-bs-n 300,
        # SACREBLEU_SEED=7
        self.check("multiref_paired_bs",
                   {"BLEU": BLEU(), "CHRF": CHRF(word_order=2), "TER": TER(normalized=True)},
                   "bs", 300, "7")

    def test_paired_approximate_randomization_matches_sacrebleu(self):
        # sacrebleu -m bleu chrf ter -lc --ter-case-sensitive --ter-no-punct --paired-ar
        # --paired-ar-n 2001, SACREBLEU_SEED unset
        self.check("multiref_paired_ar",
                   {"BLEU": BLEU(lowercase=True), "CHRF": CHRF(),
                    "TER": TER(case_sensitive=True, no_punct=True)},
                   "ar", 2001, None)

    def test_threads_and_cached_references_change_nothing(self):
        with SeedEnvironment("7"):
            one = PairedTest(self.systems, {"TER": TER()}, REF_SETS["ref1+ref2"], test_type="bs",
                             n_samples=100)()[1]
            two = PairedTest(self.systems, {"TER": TER(references=REF_SETS["ref1+ref2"])}, None,
                             test_type="bs", n_samples=100, n_jobs=2)()[1]
        self.assertEqual([repr(r) for r in one["TER"]], [repr(r) for r in two["TER"]])

    def test_ar_confidence_fills_mean_and_ci(self):
        with SeedEnvironment(None):
            signatures, scores = PairedTest(self.systems[:2], {"BLEU": BLEU()},
                                            REF_SETS["ref1+ref2"], test_type="ar",
                                            n_samples=200, n_ar_confidence=100)()
        self.assertIn("|bs:100|ar:200|seed:12345|", str(signatures["BLEU"]))
        for result in scores["BLEU"]:
            self.assertIsNotNone(result.mean)
            self.assertIsNotNone(result.ci)


if __name__ == "__main__":
    unittest.main()
