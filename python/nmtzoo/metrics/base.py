# SPDX-License-Identifier: MIT
"""`Score`, `Signature` and `Metric` in sacreBLEU 2.6.0's shape (sacrebleu/metrics/base.py).

The numbers come from nmtzoo's C++ port (`nmtzoo._core.metrics`); this module keeps sacreBLEU's
classes, argument checks, reference handling and formatting around them.
"""

import abc
import json
import logging
import os
import statistics
from typing import Any, Dict, List, Optional, Sequence

from .. import _core

_native = _core.metrics

logger = logging.getLogger("nmtzoo.metrics")

# sacreBLEU's SACREBLEU_SEED: read at each use, default 12345, "none" for OS entropy.
_SEED_VARIABLE = "SACREBLEU_SEED"
_DEFAULT_SEED = "12345"


def _seed_from_environment():
    """(seed or None, signature text, paired tests' signature text) of SACREBLEU_SEED."""
    return _native.parse_seed(os.environ.get(_SEED_VARIABLE, _DEFAULT_SEED))


# The most resamples or trials a call may ask for, nmtzoo-evaluate's bound (kMaxResamples): work
# and memory grow with it (10**9 ran unbounded).
MAX_SAMPLES = _native.MAX_RESAMPLES


def _check_samples(prefix: str, name: str, value: int):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{prefix}: `{name}` should be an integer, not {type(value).__name__}.")
    if value > MAX_SAMPLES:
        raise ValueError(f"{prefix}: `{name}` is {value}; at most {MAX_SAMPLES} are allowed.")


class Score:
    """A score of one metric, as sacreBLEU's `Score`.

    :param name: The name of the metric ("BLEU", "chrF2", "TER").
    :param score: The score.
    """

    def __init__(self, name: str, score: float):
        self.name = name
        self.score = score
        # Bootstrap estimate; a mean <= 0 is not shown, as in sacreBLEU.
        self._mean = -1.0
        self._ci = -1.0
        # What follows the score in the line (BLEU's precisions and brevity penalty).
        self._verbose = ""

    def format(self, width: int = 2, score_only: bool = False, signature: str = "",
               is_json: bool = False) -> str:
        """sacreBLEU's score line "NAME|SIGNATURE = SCORE (μ = MEAN ± CI) VERBOSE", the score
        alone (`score_only`), or a JSON object (`is_json`, which needs a signature)."""
        score_text = f"{self.score:.{width}f}"
        record = {"name": self.name, "score": float(score_text), "signature": signature}

        if self._mean > 0:
            mean_text = f"{self._mean:.{width}f}"
            ci_text = f"{self._ci:.{width}f}"
            confidence = f"μ = {mean_text} ± {ci_text}"
            score_text += f" ({confidence})"
            if is_json:
                record["confidence_mean"] = float(mean_text)
                record["confidence_var"] = float(ci_text)
                record["confidence"] = confidence

        line = f"{self.name}|{signature}" if signature else self.name
        line = f"{line} = {score_text}"
        if self._verbose:
            line += f" {self._verbose}"
            record["verbose_score"] = self._verbose

        if score_only:
            return score_text
        if is_json:
            # As in sacreBLEU, every signature field becomes a key (an empty signature fails).
            for field in signature.split("|"):
                key, value = field.split(":")
                record[key] = value
            return json.dumps(record, indent=1, ensure_ascii=False)
        return line

    def estimate_ci(self, scores: List["Score"]):
        """Stores the mean and the half-width of the 95% interval of `scores` (e.g. bootstrap
        resamples): statistics.mean, and the sorted scores' (n/40)-th and (n - n/40 - 1)-th."""
        values = sorted(x.score for x in scores)
        lower_idx = len(values) // 40
        upper_idx = len(values) - lower_idx - 1
        self._ci = 0.5 * (values[upper_idx] - values[lower_idx])
        self._mean = statistics.mean(values)

    def __repr__(self):
        return self.format()


class Signature:
    """sacreBLEU's reproducibility signature: `info` maps field names to values (None = absent),
    `format(short)` joins them as "name:value|..." with the version last.

    :param args: The metric's attributes (`metric.__dict__`); `num_refs` must be known.
    """

    def __init__(self, args: dict):
        self._abbr = {
            "version": "v",
            "nrefs": "#",
            "test": "t",
            "lang": "l",
            "subset": "S",
            "origlang": "o",
            "bs": "bs",     # bootstrap resamples
            "ar": "ar",     # approximate randomization trials
            "seed": "rs",   # the generator's seed
        }
        if "num_refs" not in args:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        num_refs = args["num_refs"]
        if num_refs == -1:
            num_refs = "var"
        self.info = {
            "version": _native.SIGNATURE_VERSION,
            "nrefs": num_refs,
            "bs": args.get("n_bootstrap", None),
            "ar": None,
            "seed": args.get("seed", None),
            "test": args.get("test_set", None),
            "lang": args.get("langpair", None),
            "origlang": args.get("origlang", None),
            "subset": args.get("subset", None),
        }

    def _add_metric_fields(self, native, num_refs: int):
        """Adds the metric's own fields as nmtzoo_metrics writes them (between nrefs and the
        version), with their abbreviations."""
        long_fields = native.signature(num_refs, False).split("|")
        short_fields = native.signature(num_refs, True).split("|")
        for long_field, short_field in zip(long_fields[1:-1], short_fields[1:-1]):
            key, value = long_field.split(":", 1)
            self._abbr[key] = short_field.split(":", 1)[0]
            self.info[key] = int(value) if value.isdigit() else value
        self.info["version"] = long_fields[-1].split(":", 1)[1]

    def format(self, short: bool = False) -> str:
        """"nrefs:1|case:mixed|...|version:2.6.0+nmtzoo", or with abbreviated names."""
        pairs = []
        names = [name for name in self.info if name != "version"] + ["version"]
        for name in names:
            value = self.info[name]
            if value is None:
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            pairs.append(f"{self._abbr[name] if short else name}:{value}")
        return "|".join(pairs)

    def update(self, key: str, value: Any):
        """Adds a field or changes one."""
        self.info[key] = value

    def __str__(self):
        return self.format()

    def __repr__(self):
        return self.format()


class Metric(abc.ABC):
    """What BLEU, CHRF and TER share, as sacreBLEU's `Metric`: reference caching, corpus and
    sentence scores from per-segment statistics, bootstrap confidence intervals, signatures.
    Subclasses set `self._native` (an `nmtzoo._core.metrics.NativeMetric`) and `_make_score`."""

    _SIGNATURE_TYPE = Signature

    def __init__(self):
        self._ref_cache = None
        # Only BLEU warns about tokenized-looking hypotheses.
        self._force = True
        # Set by corpus_score(n_bootstrap > 1) for the signature.
        self.n_bootstrap = None
        self.seed = None

    # sacreBLEU's argument checks, with its types and wording, and what it lets through refused
    # too: a str where a list belongs (sacreBLEU scores it character by character), empty lists
    # (an IndexError there) and streams of another length than the hypotheses (zipped there, so
    # the shorter list is scored without a word: EOFError with sacreBLEU 1.x's message).

    def _check_sentence_score_args(self, hyp: str, refs: Sequence[str]):
        prefix = self.__class__.__name__
        err_msg = None
        if not isinstance(hyp, str):
            err_msg = "The argument `hyp` should be a string."
        elif isinstance(refs, str) or not isinstance(refs, Sequence):
            err_msg = "The argument `refs` should be a sequence of strings."
        elif len(refs) == 0:
            raise ValueError(f"{prefix}: The argument `refs` should not be empty.")
        elif not isinstance(refs[0], str) and refs[0] is not None:
            err_msg = "Each element of `refs` should be a string."
        if err_msg:
            raise TypeError(f"{prefix}: {err_msg}")

    def _check_corpus_score_args(self, hyps: Sequence[str],
                                 refs: Optional[Sequence[Sequence[str]]]):
        prefix = self.__class__.__name__
        err_msg = None
        if isinstance(hyps, str) or not isinstance(hyps, Sequence):
            err_msg = "`hyps` should be a sequence of strings."
        elif len(hyps) == 0:
            raise ValueError(f"{prefix}: `hyps` should not be empty.")
        elif not isinstance(hyps[0], str):
            err_msg = "Each element of `hyps` should be a string."
        elif any(line is None for line in hyps):
            err_msg = "Undefined line in hypotheses stream!"
        if refs is not None:
            if isinstance(refs, str) or not isinstance(refs, Sequence):
                err_msg = "`refs` should be a sequence of sequence of strings."
            elif len(refs) == 0:
                raise ValueError(f"{prefix}: `refs` should not be empty (None uses the references "
                                 "given to the constructor).")
            elif any(isinstance(stream, str) or not isinstance(stream, Sequence)
                     for stream in refs):
                err_msg = "Each element of `refs` should be a sequence of strings."
            elif any(len(stream) == 0 for stream in refs):
                raise ValueError(f"{prefix}: a stream of `refs` is empty.")
            elif not isinstance(refs[0][0], str) and refs[0][0] is not None:
                err_msg = "`refs` should be a sequence of sequence of strings."
        if err_msg:
            raise TypeError(f"{prefix}: {err_msg}")

    def _cache_references(self, references: Sequence[Sequence[str]]) -> List[List[str]]:
        """Each segment's references (streams zipped; None drops a reference of that segment),
        and `num_refs`: the references per segment, or -1 when it varies."""
        ref_cache = []
        num_refs = set()
        for refs in zip(*references):
            lines = [x for x in refs if x is not None]
            num_refs.add(len(lines))
            ref_cache.append(lines)
        self.num_refs = next(iter(num_refs)) if len(num_refs) == 1 else -1
        return ref_cache

    def _references_for(self, references: Optional[Sequence[Sequence[str]]]) -> List[List[str]]:
        if references:
            return self._cache_references(references)
        if self._ref_cache:
            return self._ref_cache
        raise RuntimeError("No references provided and the cache is empty.")

    def _extract_corpus_statistics(self, hypotheses: Sequence[str],
                                   references: Optional[Sequence[Sequence[str]]]):
        """Per-segment statistics (an `nmtzoo._core.metrics.Statistics`). sacreBLEU zips the
        hypotheses and the segments' references, scoring the shorter list without a word; here
        streams of another length (given, or cached by the constructor) raise EOFError."""
        ref_cache = self._references_for(references)
        if len(ref_cache) != len(hypotheses) or (
                references and any(len(stream) != len(hypotheses) for stream in references)):
            raise EOFError("Source and reference streams have different lengths!")
        pairs = list(zip(hypotheses, ref_cache))
        if not self._force:
            tok_count = sum(1 for hyp, _ in pairs if hyp.endswith(" ."))
            if tok_count >= 100:
                logger.warning("That's 100 lines that end in a tokenized period ('.')")
                logger.warning("It looks like you forgot to detokenize your test data, "
                               "which may hurt your score.")
                logger.warning("If you insist your data is detokenized, or don't care, "
                               "you can suppress this message with the `force` parameter.")
        return self._native.segment_statistics([hyp for hyp, _ in pairs],
                                               [refs for _, refs in pairs])

    def _aggregate_and_compute(self, stats) -> Score:
        """The score of the summed statistics."""
        return self._make_score(self._native.score(stats))

    @abc.abstractmethod
    def _make_score(self, fields: Dict[str, Any]) -> Score:
        """The metric's score object from the C++ score's fields."""

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Score:
        """One hypothesis against its reference(s).

        :param hypothesis: A hypothesis string.
        :param references: Its reference strings.
        """
        self._check_sentence_score_args(hypothesis, references)
        stats = self._extract_corpus_statistics([hypothesis], [[ref] for ref in references])
        return self._aggregate_and_compute(stats)

    def corpus_score(self, hypotheses: Sequence[str],
                     references: Optional[Sequence[Sequence[str]]],
                     n_bootstrap: int = 1) -> Score:
        """A corpus against one or more reference streams.

        :param hypotheses: The hypothesis strings.
        :param references: Reference streams, each one string (or None) per hypothesis; None
            uses the references given to the constructor.
        :param n_bootstrap: With n > 1, also the mean and 95% confidence interval of n bootstrap
            resamples (seeded by SACREBLEU_SEED, default 12345).
        """
        self._check_corpus_score_args(hypotheses, references)
        stats = self._extract_corpus_statistics(hypotheses, references)
        actual_score = self._aggregate_and_compute(stats)
        if n_bootstrap > 1:
            _check_samples(self.__class__.__name__, "n_bootstrap", n_bootstrap)
            seed, seed_text, _ = _seed_from_environment()
            self.n_bootstrap = n_bootstrap
            self.seed = seed_text
            actual_score._mean, actual_score._ci = self._native.bootstrap(
                stats, n_bootstrap, seed)
        return actual_score

    def get_signature(self) -> Signature:
        """The signature; it needs the number of references, known once the metric has scored
        something or cached references."""
        return self._SIGNATURE_TYPE(self.__dict__)
