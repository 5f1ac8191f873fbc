# SPDX-License-Identifier: MIT
"""BLEU, chrF and TER with sacreBLEU 2.6.0's Python API, computed by nmtzoo's C++ port
(nmtzoo_metrics): code written for sacreBLEU ports by changing the import.

    from nmtzoo.metrics import BLEU, CHRF, TER
    bleu = BLEU()
    score = bleu.corpus_score(hypotheses, [references])
    print(score, bleu.get_signature())

The paired tests are in nmtzoo.metrics.significance (sacrebleu.significance); the function API
(corpus_bleu, sentence_chrf, ...) is here, as at sacreBLEU's top level. Signatures say
version:2.6.0+nmtzoo.
"""

from . import significance  # noqa: F401
from .base import Metric, Score, Signature  # noqa: F401
from .bleu import BLEU, BLEUScore  # noqa: F401
from .chrf import CHRF, CHRFScore  # noqa: F401
from .compat import (  # noqa: F401
    corpus_bleu,
    corpus_chrf,
    corpus_ter,
    raw_corpus_bleu,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
)
from .ter import TER, TERScore  # noqa: F401

METRICS = {
    "BLEU": BLEU,
    "CHRF": CHRF,
    "TER": TER,
}

__all__ = [
    "BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore", "Metric", "Score", "Signature",
    "METRICS", "significance", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf",
    "sentence_chrf", "corpus_ter", "sentence_ter",
]
