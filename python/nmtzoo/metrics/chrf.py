# SPDX-License-Identifier: MIT
"""chrF (Popović 2015) and chrF++ (Popović 2017) in sacreBLEU 2.6.0's shape
(sacrebleu/metrics/chrf.py), computed by nmtzoo_metrics."""

from typing import Any, Dict, Optional, Sequence

from .base import Metric, Score, Signature, _native


class CHRFSignature(Signature):
    """chrF's signature: case, eff, nc, nw, space."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._add_metric_fields(args["_native"], args["num_refs"])


class CHRFScore(Score):
    """A chrF score, as sacreBLEU's `CHRFScore`; named chrF<beta> plus one "+" per word order.

    :param score: The chrF (chrF++) score.
    :param char_order: The character n-gram order.
    :param word_order: The word n-gram order (2 = chrF++).
    :param beta: The weight of recall.
    """

    def __init__(self, score: float, char_order: int, word_order: int, beta: int):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{self.beta}" + "+" * self.word_order, score)


class CHRF(Metric):
    """chrF(++) with sacreBLEU's options.

    :param char_order: Character n-gram order.
    :param word_order: Word n-gram order; 2 is chrF++.
    :param beta: The weight of recall.
    :param lowercase: Case-insensitive.
    :param whitespace: Keep whitespace in character n-grams.
    :param eps_smoothing: chrF++.py/NLTK/Moses epsilon smoothing instead of effective order.
    :param references: Reference streams to cache for later corpus_score(hyps, None) calls.
    """

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2

    _SIGNATURE_TYPE = CHRFSignature

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER,
                 beta: int = BETA, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False,
                 references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        self.order = self.char_order + self.word_order
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        self._native = _native.NativeMetric.chrf(char_order, word_order, beta, lowercase, whitespace,
                                           eps_smoothing)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _make_score(self, fields: Dict[str, Any]) -> CHRFScore:
        return CHRFScore(fields["score"], self.char_order, self.word_order, self.beta)
