# SPDX-License-Identifier: MIT
"""nmtzoo from Python: translate and score with trained checkpoints, compute BLEU, chrF and TER.

    import nmtzoo
    translator = nmtzoo.Translator("runs/multi30k_quickstart/checkpoints/checkpoint_best.pt")
    result = translator.translate_batch(["Zwei Hunde spielen im Schnee."], beam=5, nbest=2)[0]
    result.hypotheses, result.scores

The library is nmtzoo's C++ one (the extension nmtzoo._core); decoding options are the config
schema's decoding keys, checked as nmtzoo-translate checks them. `nmtzoo.metrics` is imported on
first use.
"""
import importlib as _importlib

from nmtzoo._core import ConfigError, __version__
from nmtzoo.translator import ScoringResult, TranslationResult, Translator

__all__ = ["ConfigError", "ScoringResult", "TranslationResult", "Translator", "metrics", "__version__"]


def __getattr__(name):
    # `nmtzoo.metrics` without importing it with the package (`from nmtzoo import metrics` works
    # either way).
    if name == "metrics":
        return _importlib.import_module("nmtzoo.metrics")
    raise AttributeError(f"module 'nmtzoo' has no attribute {name!r}")
