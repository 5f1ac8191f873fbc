# SPDX-License-Identifier: MIT
"""TER (Snover et al., 2006) in sacreBLEU 2.6.0's shape (sacrebleu/metrics/ter.py), computed by
nmtzoo_metrics."""

from typing import Any, Dict, Optional, Sequence

from .base import Metric, Score, Signature, _native


class _TercomTokenizer:
    """sacreBLEU's TercomTokenizer: callable, with `signature()`."""

    def __init__(self, normalized: bool, no_punct: bool, asian_support: bool,
                 case_sensitive: bool):
        self._options = (normalized, no_punct, asian_support, case_sensitive)

    def __call__(self, sent: str) -> str:
        return _native.tokenize_tercom(sent, *self._options)

    def signature(self) -> str:
        return "tercom"


class TERSignature(Signature):
    """TER's signature: case, tok, norm, punct, asian."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._add_metric_fields(args["_native"], args["num_refs"])


class TERScore(Score):
    """A TER score, as sacreBLEU's `TERScore`.

    :param score: The TER score.
    :param num_edits: The edits over the corpus.
    :param ref_length: The summed average reference lengths.
    """

    def __init__(self, score: float, num_edits: float, ref_length: float):
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class TER(Metric):
    """Translation edit rate with sacreBLEU's options.

    :param normalized: Tercom's normalisation (and CJK splitting with asian_support).
    :param no_punct: Remove punctuation (and CJK punctuation with asian_support).
    :param asian_support: Asian-language handling for normalized and no_punct.
    :param case_sensitive: Do not lowercase.
    :param references: Reference streams to cache for later corpus_score(hyps, None) calls.
    """

    _SIGNATURE_TYPE = TERSignature

    def __init__(self, normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False,
                 references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self.no_punct = no_punct
        self.normalized = normalized
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self.tokenizer = _TercomTokenizer(normalized, no_punct, asian_support, case_sensitive)
        self.tokenizer_signature = self.tokenizer.signature()
        self._native = _native.NativeMetric.ter(normalized, no_punct, asian_support, case_sensitive)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _make_score(self, fields: Dict[str, Any]) -> TERScore:
        return TERScore(fields["score"], fields["num_edits"], fields["ref_length"])
