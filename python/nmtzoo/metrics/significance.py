# SPDX-License-Identifier: MIT
"""sacreBLEU 2.6.0's paired significance tests (sacrebleu/significance.py): paired bootstrap
resampling and paired approximate randomization, run by nmtzoo_metrics (no numpy needed)."""

import multiprocessing as mp
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .base import Metric, Signature, _check_samples, _native, _seed_from_environment, logger


class Result:
    """One system's result for one metric.

    :param score: The system's corpus score.
    :param p_value: Against the baseline (None for the baseline).
    :param mean: Bootstrap estimate of the mean (paired bootstrap, or AR with n_ar_confidence).
    :param ci: Half-width of its 95% confidence interval.
    """

    def __init__(self, score: float, p_value: Optional[float] = None,
                 mean: Optional[float] = None, ci: Optional[float] = None):
        self.score = score
        self.p_value = p_value
        self.mean = mean
        self.ci = ci

    def __repr__(self):
        return ",".join([f"{k}={str(v)}" for k, v in self.__dict__.items()])


def estimate_ci(scores: Sequence[float]) -> Tuple[float, float]:
    """The mean (numpy's) and the half-width of the 95% interval of `scores`."""
    return _native.estimate_ci([float(x) for x in scores])


def _reference_streams(metric: Metric, hypotheses: Sequence[str],
                       references: Optional[Sequence[Sequence[str]]]) -> List[List[str]]:
    """The metric's references for `hypotheses` as streams, for nmtzoo_metrics' paired test."""
    segments = metric._references_for(references)[:len(hypotheses)]
    counts = {len(refs) for refs in segments}
    if len(counts) > 1:
        raise NotImplementedError(
            "nmtzoo.metrics' paired tests need the same number of references for every segment")
    return [list(stream) for stream in zip(*segments)]


class PairedTest:
    """Every system against the first (the baseline) by paired approximate randomization
    (`test_type='ar'`) or paired bootstrap resampling (`'bs'`), as sacreBLEU's `PairedTest`.
    Calling it returns (signatures by metric name, {'System': names, metric name: [Result]}).

    :param named_systems: (name, hypotheses) pairs; the first is the baseline.
    :param metrics: Metric instances by any name; results use the score's name ("BLEU").
    :param references: Reference streams, or None for each metric's cached references.
    :param test_type: 'ar' or 'bs'.
    :param n_samples: Trials (ar) or resamples (bs); 0 = 10000 or 1000.
    :param n_ar_confidence: With ar, bootstrap resamples for confidence intervals; -1 = none,
        0 = 1000.
    :param n_jobs: Threads for the comparisons; 0 = half the CPUs (at most one per system).
        The numbers do not depend on it.
    """

    _DEFAULT_SAMPLES = {
        "ar": 10000,
        "bs": 1000,
    }

    def __init__(self, named_systems: List[Tuple[str, Sequence[str]]],
                 metrics: Mapping[str, Metric],
                 references: Optional[Sequence[Sequence[str]]],
                 test_type: str = "ar", n_samples: int = 0, n_ar_confidence: int = -1,
                 n_jobs: int = 1):
        if test_type not in ("ar", "bs"):
            raise AssertionError(f"Unknown test type {test_type!r}")
        _check_samples("PairedTest", "n_samples", n_samples)
        _check_samples("PairedTest", "n_ar_confidence", n_ar_confidence)
        self.test_type = test_type
        seed, _, self._seed_text = _seed_from_environment()
        self._seed = seed
        self.n_jobs = n_jobs
        self.references = references
        self.named_systems = named_systems
        self.n_ar_confidence = n_ar_confidence if n_ar_confidence != 0 else \
            self._DEFAULT_SAMPLES["bs"]
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[self.test_type]
        self.n_systems = len(named_systems) - 1
        if self.n_jobs == 0:
            self.n_jobs = max(1, min(mp.cpu_count() // 2, self.n_systems))

        self._signatures: Dict[str, Signature] = {}
        self._baseline_info: Dict[str, Tuple[Any, Result]] = {}
        self.metrics = {}

        bl_name, bl_hyps = self.named_systems[0]
        for name, metric in metrics.items():
            logger.info(f"Pre-computing {name} statistics for {bl_name!r}")
            bl_stats = metric._extract_corpus_statistics(bl_hyps, self.references)
            bl_score = metric._aggregate_and_compute(bl_stats)

            confidence_n = self.n_samples if self.test_type == "bs" else self.n_ar_confidence
            bl_mean, bl_ci = None, None
            if confidence_n > 0:
                bl_mean, bl_ci = metric._native.numpy_confidence(bl_stats, confidence_n, seed)
            result = Result(bl_score.score, mean=bl_mean, ci=bl_ci)
            self._baseline_info[bl_score.name] = (bl_stats, result)
            self.metrics[bl_score.name] = metric

            sig = metric.get_signature()
            sig.update("seed", self._seed_text)
            sig.update(self.test_type, self.n_samples)
            if self.n_ar_confidence > 0:
                sig.update("bs", self.n_ar_confidence)
            self._signatures[bl_score.name] = sig

    def __call__(self) -> Tuple[Dict[str, Signature], Dict[str, List[Union[str, Result]]]]:
        """Runs the test for every system and metric."""
        scores: Dict[str, List[Union[str, Result]]] = {}
        scores["System"] = [ns[0] for ns in self.named_systems]
        for metric_name, (_, result) in self._baseline_info.items():
            scores[metric_name] = [result]

        systems = [list(hyps) for _, hyps in self.named_systems]
        # Each comparison's draws: default_rng(seed if seed else None).
        paired_seed = self._seed if self._seed else None
        for metric_name, metric in self.metrics.items():
            streams = _reference_streams(metric, systems[0], self.references)
            report = _native.paired_test(systems, streams, metric._native, self.test_type,
                                         self.n_samples, self._seed_text, self.n_jobs)
            for (name, hyps), (score, p_value, mean, ci) in zip(self.named_systems[1:],
                                                                report["results"][1:]):
                result = Result(score, p_value, mean, ci)
                if self.test_type == "ar" and self.n_ar_confidence > 0:
                    stats = metric._extract_corpus_statistics(hyps, self.references)
                    result.mean, result.ci = metric._native.numpy_confidence(
                        stats, self.n_ar_confidence, paired_seed, self.n_samples)
                scores[metric_name].append(result)
        return self._signatures, scores
