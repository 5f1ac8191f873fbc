# SPDX-License-Identifier: MIT
"""BLEU (Papineni et al., 2002) in sacreBLEU 2.6.0's shape (sacrebleu/metrics/bleu.py), computed
by nmtzoo_metrics."""

from typing import Any, Dict, List, Optional, Sequence

from .base import Metric, Score, Signature, _native, logger

# The maximum n-gram order; nmtzoo_metrics computes BLEU-4 only.
MAX_NGRAM_ORDER = 4

# sacreBLEU's tokenizers; nmtzoo_metrics has the ones that need no external library or model.
_TOKENIZERS = ("none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101",
               "flores200", "spBLEU-1K")
_NATIVE_TOKENIZERS = ("none", "zh", "13a", "intl", "char")


class _Tokenizer:
    """A BLEU tokenizer as sacreBLEU's tokenizer objects: callable, with `signature()`."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, line: str) -> str:
        return _native.tokenize_bleu(line, self.name)

    def signature(self) -> str:
        return self.name


class BLEUSignature(Signature):
    """BLEU's signature: case, eff, tok, smooth."""

    def __init__(self, args: dict):
        super().__init__(args)
        self._add_metric_fields(args["_native"], args["num_refs"])


class BLEUScore(Score):
    """A BLEU score with its statistics, as sacreBLEU's `BLEUScore`.

    :param score: The BLEU score.
    :param counts: Matched n-grams per order (after add-k smoothing, as sacreBLEU shows them).
    :param totals: Hypothesis n-grams per order (likewise).
    :param precisions: Precisions per order, in percent.
    :param bp: The brevity penalty.
    :param sys_len: Hypothesis length.
    :param ref_len: Reference length.
    """

    def __init__(self, score: float, counts: List[int], totals: List[int],
                 precisions: List[float], bp: float, sys_len: int, ref_len: int):
        super().__init__("BLEU", score)
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.prec_str = "/".join([f"{p:.1f}" for p in self.precisions])
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0
        self._verbose = (f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
                         f"hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})")


class BLEU(Metric):
    """BLEU with sacreBLEU's options.

    :param lowercase: Case-insensitive BLEU.
    :param force: No warning for hypotheses that look tokenized.
    :param tokenize: "13a", "intl", "char", "zh" or "none"; None picks by `trg_lang` (zh) or
        13a. sacreBLEU's ja-mecab, ko-mecab, spm, flores101, flores200 and spBLEU-1K raise
        NotImplementedError.
    :param smooth_method: "exp", "floor", "add-k" or "none".
    :param smooth_value: floor's and add-k's value; None = 0.1 and 1.
    :param max_ngram_order: Only 4 (anything else raises NotImplementedError).
    :param effective_order: Ignore the orders no hypothesis n-gram reaches (sentence BLEU).
    :param trg_lang: Target language, for the tokenizer choice and its warnings.
    :param references: Reference streams to cache for later corpus_score(hyps, None) calls.
    """

    SMOOTH_DEFAULTS: Dict[str, Optional[float]] = {
        "none": None,
        "floor": 0.1,
        "add-k": 1,
        "exp": None,
    }

    TOKENIZERS = _TOKENIZERS
    TOKENIZER_DEFAULT = "13a"
    _TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}

    _SIGNATURE_TYPE = BLEUSignature

    def __init__(self, lowercase: bool = False, force: bool = False,
                 tokenize: Optional[str] = None, smooth_method: str = "exp",
                 smooth_value: Optional[float] = None, max_ngram_order: int = MAX_NGRAM_ORDER,
                 effective_order: bool = False, trg_lang: str = "",
                 references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self._force = force
        self.trg_lang = trg_lang
        self.lowercase = lowercase
        self.smooth_value = smooth_value
        self.smooth_method = smooth_method
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order

        if self.smooth_method not in self.SMOOTH_DEFAULTS:
            # sacreBLEU's assertion, with the value its message meant to show (its message lacks
            # the f and prints the braces).
            raise AssertionError(f"Unknown smooth_method {self.smooth_method!r}")

        if tokenize is None:
            best_tokenizer = self._TOKENIZER_MAP.get(self.trg_lang, self.TOKENIZER_DEFAULT)
        else:
            best_tokenizer = tokenize
            if self.trg_lang == "zh" and best_tokenizer != "zh":
                logger.warning("Consider using the 'zh' or 'spm' tokenizer for Chinese.")
            if self.trg_lang == "ja" and best_tokenizer != "ja-mecab":
                logger.warning("Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese.")
            if self.trg_lang == "ko" and best_tokenizer != "ko-mecab":
                logger.warning("Consider using the 'ko-mecab' or 'spm' tokenizer for Korean.")

        if best_tokenizer not in _TOKENIZERS:
            raise KeyError(best_tokenizer)  # sacreBLEU's lookup in its tokenizer table
        if best_tokenizer not in _NATIVE_TOKENIZERS:
            raise NotImplementedError(
                f"nmtzoo.metrics has no {best_tokenizer!r} tokenizer (it has "
                f"{', '.join(_NATIVE_TOKENIZERS)})")
        if max_ngram_order != MAX_NGRAM_ORDER:
            raise NotImplementedError(
                f"nmtzoo.metrics computes BLEU with max_ngram_order={MAX_NGRAM_ORDER} only, "
                f"not {max_ngram_order!r}")

        self.tokenizer = _Tokenizer(best_tokenizer)
        self.tokenizer_signature = self.tokenizer.signature()
        self._native = _native.NativeMetric.bleu(best_tokenizer, smooth_method, smooth_value,
                                           lowercase, effective_order)
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _make_score(self, fields: Dict[str, Any]) -> BLEUScore:
        counts, totals = list(fields["counts"]), list(fields["totals"])
        if self.smooth_method == "add-k" and any(counts):
            # sacreBLEU's compute_bleu adds the value to the lists it then stores in the score.
            value = self.smooth_value if self.smooth_value is not None else \
                self.SMOOTH_DEFAULTS["add-k"]
            for n in range(1, len(counts) + 1):
                if n > 1:
                    counts[n - 1] += value
                    totals[n - 1] += value
                if totals[n - 1] == 0:
                    break
        return BLEUScore(fields["score"], counts, totals, list(fields["precisions"]),
                         fields["bp"], fields["sys_len"], fields["ref_len"])

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> BLEUScore:
        """One hypothesis against its reference(s); set effective_order for sentence BLEU."""
        if not self.effective_order:
            logger.warning(
                "It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)
