# SPDX-License-Identifier: MIT
"""nmtzoo.Translator: load a checkpoint (or an ensemble) once, then translate and score batches.

The C++ Translator (libtorch/search/translator.h) does the work; this module gives it CTranslate2's
shape: translate_batch returns one TranslationResult per source, with .hypotheses, .scores and,
when asked, .attention. Decoding options are keywords named after the schema's decoding keys
(nmtzoo-config --reference: beam, nbest, length_penalty, alpha, max_len_a, max_len_b, min_len,
batch_tokens, dtype, sampling, temperature, top_k, top_p, seed, unk_penalty, ...), applied over the
(first) checkpoint's decoding section and checked by the schema, as nmtzoo-translate's flags are.
"""
import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Union

from nmtzoo import _core

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class TranslationResult:
    """One source's translations, best first (what nmtzoo-translate --format jsonl writes).

    An empty source, or an output the length limits left empty, has one empty hypothesis whose
    score and log_prob are None.
    """

    hypotheses: List[str]              # detokenized texts
    scores: List[Optional[float]]      # log-probability after the length penalty (what ranks)
    log_probs: List[Optional[float]]   # sum of the token log-probabilities, EOS included
    tokens: List[List[str]]            # each hypothesis's target pieces, without EOS
    source_tokens: List[str]           # the source pieces the model saw, then "</s>"
    # With return_alignment: each hypothesis's Pharaoh word alignment "0-0 1-2" (source-target).
    alignments: Optional[List[str]] = None
    # With return_attention: each hypothesis's cross-attention, one row per target token and EOS,
    # one column per source piece and EOS (source_tokens).
    attention: Optional[List[List[List[float]]]] = None
    truncated: bool = False            # the source was cut to the model's length limit
    warnings: List[str] = field(default_factory=list)  # what a length limit did to the output

    @classmethod
    def _from_json(cls, result: dict, alignment: bool, attention: bool) -> "TranslationResult":
        nbest = result["nbest"]
        return cls(
            hypotheses=[h["text"] for h in nbest],
            scores=[h["score"] for h in nbest],
            log_probs=[h.get("log_prob") for h in nbest],
            tokens=[h.get("tokens", []) for h in nbest],
            source_tokens=result["source_tokens"],
            alignments=[h.get("alignment", "") for h in nbest] if alignment else None,
            attention=[h.get("attention", []) for h in nbest] if attention else None,
            truncated=result.get("truncated", False),
            warnings=result.get("warnings", []),
        )


@dataclass(frozen=True)
class ScoringResult:
    """Teacher-forced log-probabilities of one target given its source."""

    log_prob: float                    # sum over the target tokens and EOS
    token_log_probs: List[float]       # one per target piece, then EOS
    tokens: List[str]                  # the target pieces, then "</s>"
    truncated: bool = False            # source or target cut to the model's length limit


def _texts(values: Iterable[str], name: str, allow_none: bool = False) -> List[str]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a list of str, not a single {type(values).__name__}")
    texts = list(values)
    for i, text in enumerate(texts):
        if not isinstance(text, str) and not (allow_none and text is None):  # bytes were read as UTF-8 whatever they held
            raise TypeError(f"{name}[{i}] must be a str, not {type(text).__name__}")
    return texts


class Translator:
    """A checkpoint, or an ensemble of checkpoints sharing their vocabularies, loaded once.

    checkpoints: a path, or a list of paths (an ensemble when several).
    dtype: "float32", "bf16" or "int8" (decoding.dtype) for every call; None: the checkpoint's.
    threads: LibTorch's intra-op threads, process-wide (0 = every core, at most this machine's
        cores); None leaves them as they are (torch.set_num_threads).
    device: "cpu", "cuda" or "auto".
    weights: ensemble weights, one positive value per checkpoint; None = equal.
    ensemble_mode: "prob" (log of the weighted mean of probabilities) or "logprob" (weighted sum
        of log-probabilities).

    Creating a Translator sends LibTorch's CPU float32 matrix products through oneDNN for the
    whole process, as nmtzoo's apps do (libtorch/kernels/onednn_matmul.h). Calls release the GIL and run
    at once: threads sharing a Translator translate in parallel on its one set of weights (give
    each its share of the cores: threads=1 for two Python threads on two). Bad options raise ValueError
    (nmtzoo.ConfigError for the schema's checks) with nmtzoo-translate's messages, naming the
    keyword where the app names its flag; an unknown keyword, or a number given as a str, raises
    TypeError. A checkpoint that is missing raises FileNotFoundError, a directory
    IsADirectoryError, an empty, truncated or corrupt one ValueError.
    """

    def __init__(self, checkpoints: Union[PathLike, Sequence[PathLike]], dtype: Optional[str] = None,
                 threads: Optional[int] = None, device: str = "cpu",
                 weights: Optional[Sequence[float]] = None, ensemble_mode: str = "prob"):
        if isinstance(checkpoints, (str, os.PathLike)):
            paths = [os.fspath(checkpoints)]
        else:
            paths = [os.fspath(path) for path in checkpoints]
        self._translator = _core.Translator(paths, dtype=dtype, threads=threads, device=device,
                                            weights=[float(w) for w in weights or []],
                                            ensemble_mode=ensemble_mode)

    def translate_batch(self, sources: Sequence[str], *, target_prefix: Optional[Sequence[Optional[str]]] = None,
                        return_alignment: bool = False, return_attention: bool = False,
                        alignment_layer: Optional[int] = None, alignment_heads: int = 0,
                        **options) -> List[TranslationResult]:
        """Translates each source; options are decoding keys (beam=5, nbest=2, sampling=True, ...).

        target_prefix: per source, text the output must start with (None or "" for none).
        return_alignment / return_attention: word alignments / attention matrices, from the
        cross-attention of decoder layer alignment_layer (None: the penultimate; -1: the mean of
        all), averaged over its first alignment_heads heads (0: all), as nmtzoo-translate's
        --alignment hard / soft.
        """
        sources = _texts(sources, "sources")
        prefixes = None
        if target_prefix is not None:
            prefixes = ["" if prefix is None else prefix for prefix in _texts(target_prefix, "target_prefix", allow_none=True)]
        layer = -2 if alignment_layer is None else alignment_layer
        results = self._translator.translate_batch(sources, prefixes, return_alignment, return_attention,
                                                   layer, alignment_heads, options)
        return [TranslationResult._from_json(r, return_alignment, return_attention) for r in results]

    def score_batch(self, sources: Sequence[str], targets: Sequence[str], **options) -> List[ScoringResult]:
        """Teacher-forced log-probabilities of each target given its source (the ensemble's
        combined distribution for several models); options: batch_tokens, dtype (bf16 scores in
        bf16 autocast; int8 weights are not used to score)."""
        results = self._translator.score_batch(_texts(sources, "sources"), _texts(targets, "targets"), options)
        return [ScoringResult(**r) for r in results]

    def decoding_options(self, **options) -> Dict[str, str]:
        """Every decoding key's value (as YAML text) that a call with these options would use."""
        return self._translator.decoding_options(options)

    @property
    def checkpoints(self) -> List[str]:
        return self._translator.checkpoints

    @property
    def arch(self) -> str:
        """The (first) checkpoint's architecture."""
        return self._translator.arch

    @property
    def device(self) -> str:
        return self._translator.device

    @property
    def max_source_tokens(self) -> int:
        """Source pieces kept; longer sources are truncated (TranslationResult.truncated)."""
        return self._translator.max_source_tokens

    def __repr__(self) -> str:
        return f"nmtzoo.Translator({self.checkpoints!r}, device={self.device!r})"
