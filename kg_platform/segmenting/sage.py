"""Semantic segmentation: cut text into semantically complete chunks (after the SAGE paper).

The segmenter is named for what it does (:class:`SemanticSegmenter`, its boundary model
:class:`~kg_platform.segmenting.boundary_model.BoundaryModel`); ``sage`` stays the value of
``segment.segmenter`` that chooses it and the name recorded in each source's pipeline, crediting
the paper the method comes from.

A small model decides, for every pair of adjacent sentences, whether they belong in one chunk.
Both sentences go through the platform's sentence embedder (frozen: the MLP head is the only
trained part, so the shipped artifact stays small and the embedder stays the one used for
retrieval); the head reads ``[x1, x2, x1 - x2, x1 * x2]`` and outputs a "keep together" score in
[0, 1]. Inference: cut wherever an adjacent pair scores below ``ss``, and never let a chunk
exceed the coarse size ``l`` tokens (unless one sentence does). The paper packs coarse chunks
greedily first (``coarse_mode="greedy"``); the default ``adaptive`` mode places the size cuts at
the weakest pair instead, which keeps the guarantee with fewer arbitrary cuts (see
:func:`sage_cuts`).

Public interface used by ingestion::

    segmenter = load_segmenter(settings)      # SemanticSegmenter, name == "sage"
    groups = segmenter.split(sentences)       # list[list[str]], consecutive groups

The artifact is a directory with ``head.safetensors`` (float16 weights) and ``meta.json``
(format version, embedder name and dimension, calibrated threshold, training metrics); the head,
its features and that file are :mod:`kg_platform.segmenting.boundary_model` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import ConfigError, EmbeddingError
from kg_platform.segmenting.boundary_model import (
    ARTIFACT_FORMAT,
    NumpyBoundaryHead,
    BoundaryModel,
    default_model_dir,
    load_model,
    pair_features,
    save_model,
)

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.embedding import Embedder

__all__ = [
    "ARTIFACT_FORMAT",
    "NumpyBoundaryHead",
    "BoundaryModel",
    "SemanticSegmenter",
    "cut_by_scores",
    "default_model_dir",
    "groups_from_cuts",
    "load_model",
    "load_segmenter",
    "pack_coarse",
    "pair_features",
    "sage_cuts",
    "save_model",
]

# --------------------------------------------------------------------------- cutting


def pack_coarse(token_counts: Sequence[int], max_tokens: int) -> list[tuple[int, int]]:
    """Greedy sentence-complete packing: ``[start, end)`` ranges of about ``max_tokens`` tokens.

    A sentence longer than ``max_tokens`` becomes a range of its own; sentences are never split.
    """
    if max_tokens <= 0:
        raise ConfigError(
            "SAGE coarse chunk size must be positive",
            hint="set tuning segment.sage_coarse_tokens ([lab.tuning.segment]) to e.g. 400",
        )
    ranges: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, n in enumerate(token_counts):
        if i > start and total + n > max_tokens:
            ranges.append((start, i))
            start, total = i, 0
        total += n
    if len(token_counts) > start:
        ranges.append((start, len(token_counts)))
    return ranges


def cut_by_scores(scores: Sequence[float], threshold: float) -> list[int]:
    """Indexes ``i`` where a cut falls between sentence ``i`` and ``i + 1`` (score < threshold)."""
    return [i for i, s in enumerate(scores) if s < threshold]


def groups_from_cuts(items: Sequence[str], cuts: Sequence[int]) -> list[list[str]]:
    """Split ``items`` into consecutive groups, cutting after each index in ``cuts``."""
    groups: list[list[str]] = []
    start = 0
    for c in sorted(set(cuts)):
        if 0 <= c < len(items) - 1:
            groups.append(list(items[start : c + 1]))
            start = c + 1
    if start < len(items):
        groups.append(list(items[start:]))
    return groups


COARSE_MODES = ("adaptive", "greedy")


def sage_cuts(
    scores: Sequence[float],
    token_counts: Sequence[int],
    threshold: float,
    max_tokens: int,
    mode: str = "adaptive",
) -> list[int]:
    """SAGE's cut rule over one text: pair scores below ``threshold`` cut, and no chunk may
    exceed ``max_tokens`` (the coarse size ``l``) unless it is a single sentence.

    ``greedy`` is the paper's order: pack sentences greedily into coarse chunks of at most
    ``max_tokens``, keep those boundaries as cuts, then cut inside at low scores. ``adaptive``
    (default) gives the same size guarantee with fewer arbitrary cuts: cut at low scores first,
    then split any chunk still over ``max_tokens`` at its lowest-scoring pair, recursively, so
    the size cuts also fall where the model sees the weakest link. On the validation documents
    the greedy coarse cuts are the largest source of false boundaries (see ``kgp lab bench segment``).
    """
    n = len(token_counts)
    if n < 2:
        return []
    if len(scores) != n - 1:
        raise ValueError(f"{n} sentences need {n - 1} pair scores, got {len(scores)}")
    model_cuts = set(cut_by_scores(scores, threshold))
    if mode == "greedy":
        ranges = pack_coarse(token_counts, max_tokens)
        return sorted(model_cuts | {end - 1 for _, end in ranges[:-1]})
    if max_tokens <= 0:
        raise ConfigError(
            "SAGE coarse chunk size must be positive",
            hint="set tuning segment.sage_coarse_tokens ([lab.tuning.segment]) to e.g. 400",
        )
    prefix = np.concatenate([[0], np.cumsum(np.asarray(token_counts, dtype=np.int64))])
    cuts = set(model_cuts)
    bounds = [-1, *sorted(model_cuts), n - 1]
    stack = [(bounds[i] + 1, bounds[i + 1]) for i in range(len(bounds) - 1)]
    while stack:
        start, end = stack.pop()  # sentences start..end inclusive
        if end > start and prefix[end + 1] - prefix[start] > max_tokens:
            inner = np.asarray(scores[start:end], dtype=np.float64)
            c = start + int(np.argmin(inner))
            cuts.add(c)
            stack += [(start, c), (c + 1, end)]
    return sorted(cuts)


class SemanticSegmenter:
    """Cuts where adjacent sentences stop belonging together (the boundary model's scores, the
    SAGE paper's method), bounded by the coarse size; ``split(sentences)`` returns consecutive
    groups."""

    name = "sage"

    def __init__(
        self,
        model: BoundaryModel,
        embed: Callable[[list[str]], np.ndarray],
        *,
        threshold: float,
        coarse_tokens: int,
        count_tokens: Callable[[list[str]], list[int]] | None = None,
        batch_size: int = 512,
        coarse_mode: str = "adaptive",
    ) -> None:
        if coarse_mode not in COARSE_MODES:
            raise ConfigError(
                f"unknown SAGE coarse mode {coarse_mode!r}",
                hint=f"use one of {', '.join(COARSE_MODES)}",
            )
        self.coarse_mode = coarse_mode
        self.model = model
        self._embed = embed
        self.threshold = float(threshold)
        self.coarse_tokens = int(coarse_tokens)
        self.batch_size = batch_size
        if count_tokens is None:
            from kg_platform.tokens import count_tokens_batch

            count_tokens = count_tokens_batch
        self._count_tokens = count_tokens

    def embed(self, sentences: list[str]) -> np.ndarray:
        vectors = self._embed(list(sentences))
        if vectors.shape[1:] != (self.model.dim,):
            raise EmbeddingError(
                f"SAGE model expects {self.model.dim}-d sentence vectors, embedder gave "
                f"{vectors.shape[1:]}",
                hint=f"use the embedder the model was trained with ({self.model.meta.get('embedder')}) "
                "or retrain with `kgp lab segmenter train`",
            )
        owner = getattr(self._embed, "__self__", None)
        if owner is not None:  # ingestion reuses these for pieces that are one sentence
            from kg_platform.embedding.memo import embedder_key, sentence_memo

            sentence_memo().put(embedder_key(owner), sentences, vectors)
        return vectors

    def score_adjacent(
        self, sentences: Sequence[str], vectors: np.ndarray | None = None
    ) -> np.ndarray:
        """Scores of the ``len(sentences) - 1`` adjacent pairs (1 = keep together)."""
        if len(sentences) < 2:
            return np.zeros(0, dtype=np.float32)
        if vectors is None:
            vectors = self.embed(list(sentences))
        return self.model.score_pairs(vectors[:-1], vectors[1:], batch_size=self.batch_size)

    def cuts(self, sentences: Sequence[str], vectors: np.ndarray | None = None) -> list[int]:
        """Cut indexes (cut after sentence i): model cuts plus the size bound of ``coarse_tokens``."""
        sentences = list(sentences)
        if len(sentences) < 2:
            return []
        scores = self.score_adjacent(sentences, vectors)
        return sage_cuts(
            scores,
            self._count_tokens(sentences),
            self.threshold,
            self.coarse_tokens,
            self.coarse_mode,
        )

    def split(self, sentences: list[str]) -> list[list[str]]:
        """Consecutive groups of ``sentences``; each group is one SAGE (level-1) chunk."""
        return groups_from_cuts(sentences, self.cuts(sentences))


def load_segmenter(
    settings: "Settings | None" = None,
    *,
    model_dir: Path | None = None,
    embedder: "Embedder | None" = None,
) -> SemanticSegmenter:
    """The SAGE segmenter the settings describe (model from ``segment.sage_model`` or shipped)."""
    if settings is None:
        from kg_platform.config import get_settings

        settings = get_settings()
    if model_dir is None:
        configured = getattr(settings.segment, "sage_model", None)
        model_dir = Path(configured).expanduser() if configured else default_model_dir()
    model = load_model(model_dir)
    if embedder is None:
        from kg_platform.embedding import get_embedder

        embedder = get_embedder(settings.embedding)
    trained_for = model.meta.get("embedder")
    if trained_for and trained_for != embedder.model_name:
        raise ConfigError(
            f"the SAGE model in {model_dir} was trained on {trained_for!r} sentence vectors, "
            f"but the configured embedder is {embedder.model_name!r}",
            hint="train a SAGE model for this embedder with `kgp lab segmenter train --out DIR` and "
            "set KGP_SEGMENT__SAGE_MODEL=DIR",
        )
    threshold, coarse_tokens, coarse_mode = segmenter_params(settings, model.meta)
    return SemanticSegmenter(
        model,
        embedder.embed,
        threshold=threshold,
        coarse_tokens=coarse_tokens,
        coarse_mode=coarse_mode,
    )


def segmenter_params(settings: Any, meta: dict[str, Any]) -> tuple[float, int, str]:
    """(cut threshold, coarse chunk tokens, coarse mode) of a SAGE model: the ones calibrated
    into its ``meta`` (the shipped model: 0.44, 400, adaptive), unless the lab overrides them
    (:mod:`kg_platform.tuning` ``segment.sage_*``)."""
    tuned = settings.tuning.segment
    threshold = tuned.sage_threshold
    if threshold is None:
        threshold = meta["threshold"]
    coarse_tokens = tuned.sage_coarse_tokens or meta.get("coarse_tokens", 400)
    coarse_mode = tuned.sage_coarse_mode or meta.get("coarse_mode", "adaptive")
    return float(threshold), int(coarse_tokens), str(coarse_mode)
