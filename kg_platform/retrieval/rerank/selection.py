"""SAGE selection (SAGE paper): rerank the candidates, then cut where the scores fall steeply.

A post-processor usable on any strategy (``--select sage``): the strategy returns its top-N
candidates, :func:`apply_selection` reranks them against the question (a cross-encoder when
``settings.sage.cross_encoder`` names a local model, otherwise the late-interaction score of
``--select late`` or the embedder's cosine: :func:`sage_scorer`) and keeps
the first :func:`gradient_cut` of them. The number returned is decided by the cut, not by ``k``:
callers that want SAGE should fetch ``settings.tuning.sage.n_candidates`` items first.

The rule is the multiplicative reading of the paper's misprinted pseudo-code: after ``min_k``
items, keep item ``i`` while ``S[i] >= g * S[i-1]`` (it reproduces the paper's worked example).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.embedding.base import has_token_states
from kg_platform.errors import ConfigError, RetrievalError
from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.text_cache import TextCache

if TYPE_CHECKING:
    from kg_platform.retrieval.base import RetrievalContext

log = logging.getLogger(__name__)

SELECTIONS = ("auto", "none", "sage", "late")
_EPS = 1e-6


def gradient_cut(scores: Sequence[float], min_k: int, g: float) -> int:
    """How many of the descending ``scores`` to keep (paper Algorithm 2, multiplicative rule).

    The first ``min_k`` are always kept; then item ``i`` is kept while ``S[i] >= g * S[i-1]``;
    the first steeper drop stops the scan. Scores must be positive for a ratio test.
    """
    if min_k < 1:
        raise ConfigError(
            f"SAGE min_k must be >= 1, got {min_k}",
            hint="set tuning sage.min_k ([lab.tuning.sage])",
        )
    if not 0.0 < g <= 1.0:
        raise ConfigError(
            f"SAGE gradient g must be in (0, 1], got {g}",
            hint="set tuning sage.gradient ([lab.tuning.sage]), e.g. 0.3 (paper)",
        )
    n = len(scores)
    keep = min(min_k, n)
    for i in range(keep, n):
        if scores[i] >= g * scores[i - 1]:
            keep = i + 1
        else:
            break
    return keep


_CE_CACHE: dict[str, object] = {}
_CE_LOCK = threading.Lock()


def _cross_encoder(path: str) -> Any:  # sentence_transformers.CrossEncoder
    with _CE_LOCK:
        if path not in _CE_CACHE:
            try:
                from sentence_transformers import CrossEncoder

                _CE_CACHE[path] = CrossEncoder(path, device="cpu")
            except Exception as exc:
                raise ConfigError(
                    f"could not load the SAGE cross-encoder from {path}: {exc}",
                    hint="set KGP_SAGE__CROSS_ENCODER to a local cross-encoder directory, or "
                    "unset it to rerank with the embedder's cosine",
                ) from exc
        return _CE_CACHE[path]


#: ``g`` per scorer when ``sage.gradient`` is unset. The paper's 0.3 suits a cross-encoder's
#: probabilities. The embedder's cosines lie in a narrow band where 0.3 never cuts; it stays for
#: them (the cut is then ``min_k`` or all candidates). The late score is min-max scaled over the
#: candidates (0 at the worst, up to 2 at the best), so a ratio test has room to bite: its value
#: is calibrated on the bench dev sets.
PAPER_GRADIENT = 0.3
DEFAULT_GRADIENT = {"cross-encoder": PAPER_GRADIENT, "late": 0.7, "embedder-cosine": PAPER_GRADIENT}


def sage_scorer(ctx: "RetrievalContext") -> str:
    """The scorer SAGE reranks with: ``cross-encoder`` when ``sage.cross_encoder`` is set, else
    ``late`` or ``embedder-cosine`` per ``sage.scorer`` (``auto``: late when the embedder
    exposes word-piece states)."""
    cfg = ctx.settings.sage
    if cfg.cross_encoder:
        return "cross-encoder"
    choice = ctx.settings.tuning.sage.scorer
    if choice == "auto":
        choice = "late" if has_token_states(ctx.embedder) else "cosine"
    return "late" if choice == "late" else "embedder-cosine"


def sage_gradient(settings: Any, scorer: str) -> float:
    """``sage.gradient`` when set, else the value calibrated for ``scorer``."""
    g = settings.tuning.sage.gradient
    return DEFAULT_GRADIENT.get(scorer, PAPER_GRADIENT) if g is None else float(g)


def rerank_scores(
    query: str,
    texts: list[str],
    ctx: "RetrievalContext",
    ids: Sequence[str] | None = None,
) -> tuple[np.ndarray, str]:
    """Positive relevance scores of ``texts`` for ``query`` and the name of the scorer used
    (:func:`sage_scorer`). ``ids`` (the items' node ids) let the late scorer read each text
    under its section path."""
    if not texts:
        return np.zeros(0, dtype=np.float32), "none"
    scorer = sage_scorer(ctx)
    if scorer == "cross-encoder":
        path = str(ctx.settings.sage.cross_encoder)
        raw = np.asarray(
            _cross_encoder(path).predict([(query, t) for t in texts]), dtype=np.float64
        )
        # Logits may be negative; the ratio test needs positive scores (SAGE paper): sigmoid.
        return 1.0 / (1.0 + np.exp(-raw)), scorer
    if scorer == "late":
        from kg_platform.retrieval.rerank.late_interaction import late_scores

        scores, _, _ = late_scores(query, texts, ctx, ids=ids)
        return np.maximum(scores, _EPS), scorer
    vecs = _embed_cached(ctx, [query, *texts])
    cos = vecs[1:] @ vecs[0]
    return np.maximum(cos.astype(np.float64), _EPS), scorer


_VECTORS: TextCache[np.ndarray] = TextCache(50_000)  # ~75 MB of 384-d float32 vectors


def _embed_cached(ctx: "RetrievalContext", texts: list[str]) -> np.ndarray:
    """The embedder's vectors, reusing those of texts seen before in this process (LRU)."""
    vectors = _VECTORS.get_many(ctx.embedder.model_name, texts, ctx.embedder.embed)
    return np.stack([np.asarray(v) for v in vectors])


def sage_rerank(
    query: str, items: list[RetrievedItem], ctx: "RetrievalContext"
) -> list[RetrievedItem]:
    """The first ``sage.n_candidates`` items reranked by SAGE's scorer, all of them kept, each
    with its SAGE score (the pool a gradient cut, or self-feedback, works from)."""
    cfg = ctx.settings.tuning.sage
    candidates = items[: cfg.n_candidates]
    scores, scorer = rerank_scores(
        query, [it.text for it in candidates], ctx, ids=[it.id for it in candidates]
    )
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    out = []
    for i in order:
        it = candidates[i]
        breakdown = {
            **it.breakdown,
            "retrieval_score": it.score,
            f"sage_{scorer}": float(scores[i]),
        }
        out.append(replace(it, score=float(scores[i]), breakdown=breakdown))
    return out


def sage_keep(ranked: list[RetrievedItem], ctx: "RetrievalContext") -> int:
    """How many of SAGE's reranked items its gradient cut keeps."""
    g = sage_gradient(ctx.settings, sage_scorer(ctx))
    keep = (
        gradient_cut([it.score for it in ranked], ctx.settings.tuning.sage.min_k, g)
        if ranked
        else 0
    )
    log.debug("sage selection kept %d of %d candidates", keep, len(ranked))
    return keep


def late_rerank(
    query: str,
    items: list[RetrievedItem],
    ctx: "RetrievalContext",
    strategy: str | None = None,
) -> list[RetrievedItem]:
    """Reorder ``strategy``'s first items (``rerank.n_candidates``, unset: as many as the
    weights file gives the strategy, else 30) by the late rerank's score: cosine,
    MaxSim (late interaction, :mod:`kg_platform.retrieval.rerank.late_interaction`), the strategy's own
    score and rank, weighted as fitted for ``strategy``
    (:func:`~kg_platform.retrieval.rerank.weights.weights_for`); over long documents
    (``rerank.structure``) the document rerank's model instead, which adds where each candidate
    sits in its document (:mod:`kg_platform.retrieval.rerank.structure`); an item's score is
    then the model's probability that it holds evidence. With ``rerank.chain_pair`` the
    candidates are then ordered by the chain-pair model, which reads each one's links to the late
    rerank's first two (:mod:`kg_platform.retrieval.rerank.chain_pair`). The rest follow in
    their order. Keeps every item: the caller's ``k`` or token budget decides how many are used."""
    from kg_platform.retrieval.rerank.late_interaction import combine, late_scores
    from kg_platform.retrieval.rerank.weights import candidates_for, weights_for
    from kg_platform.retrieval.rerank.structure import model_for, structure_scores

    n = candidates_for(strategy, ctx.settings)
    head, tail = items[:n], items[n:]
    ids = [it.id for it in head]
    _, cos, sim = late_scores(query, [it.text for it in head], ctx, ids=ids)
    structure = model_for(ctx) if head else None
    if structure is not None:
        scores = structure_scores(structure, cos, sim, ids, ctx)
        # shown as the model's probability that the item holds evidence (same order)
        shown = 1.0 / (1.0 + np.exp(-scores))
    else:
        retrieval = np.asarray([it.score for it in head], dtype=np.float64)
        scores = shown = combine(weights_for(strategy, ctx.settings), cos, sim, retrieval)
    order = sorted(range(len(head)), key=lambda i: (-round(float(scores[i]), 9), i))
    pair = None
    if structure is None and ctx.settings.tuning.rerank.chain_pair and len(head) > 2:
        from kg_platform.retrieval.rerank.chain_pair import chain_pair_scores

        pair = chain_pair_scores(query, ids, [it.text for it in head], scores, ctx)
        late_pos = {j: p for p, j in enumerate(order)}
        order = sorted(range(len(head)), key=lambda i: (-round(float(pair[i]), 9), late_pos[i]))
        shown = 1.0 / (1.0 + np.exp(-pair))
    out = []
    for i in order:
        it = head[i]
        breakdown = {
            **it.breakdown,
            "retrieval_score": it.score,
            "late_cosine": float(cos[i]),
            "late_maxsim": float(sim[i]),
        }
        if structure is not None or pair is not None:
            breakdown["evidence_probability"] = float(shown[i])
        out.append(replace(it, score=float(shown[i]), breakdown=breakdown))
    return out + tail


def resolve_selection(name: str | None, ctx: "RetrievalContext") -> str:
    """The selection that runs for ``name``: ``auto`` is ``late`` when the embedder exposes
    word-piece states (the bundled ONNX model does), else ``none``; others are themselves.

    Why ``auto`` is the default (``retrieve.select``): the late rerank needs nothing trained or
    fitted and puts the candidates that hold the question's terms first, for a fraction of a
    second per question on a CPU; an embedder without word-piece states (an OpenAI-compatible server) cannot run it, so
    ``auto`` falls back to no selection there instead of failing."""
    if name in (None, ""):
        return "none"
    if name == "auto":
        return "late" if has_token_states(ctx.embedder) else "none"
    if name not in SELECTIONS:
        raise RetrievalError(
            f"unknown selection {name!r}", hint=f"use one of: {', '.join(SELECTIONS)}"
        )
    return name


def decides_count(name: str | None) -> bool:
    """Whether the selection itself decides how many items to return (SAGE's cut) rather than
    leaving the caller's ``k`` to cut its ranking."""
    return name == "sage"


def rank_and_keep(
    name: str,
    query: str,
    items: list[RetrievedItem],
    ctx: "RetrievalContext",
    strategy: str | None = None,
) -> tuple[list[RetrievedItem], int | None]:
    """A strategy's ranked items after the named selection, and how many of them the selection
    keeps (``None``: the caller's ``k`` or budget decides). ``sage`` returns its whole reranked
    pool with its gradient cut; ``late`` reorders (with ``strategy``'s fitted weights);
    ``none`` leaves the ranking as it is."""
    name = resolve_selection(name, ctx)  # raises on an unknown name
    if name == "sage":
        ranked = sage_rerank(query, items, ctx)
        return ranked, sage_keep(ranked, ctx)
    if name == "late":
        return late_rerank(query, items, ctx, strategy), None
    return items, None


def apply_selection(
    name: str,
    query: str,
    items: list[RetrievedItem],
    ctx: "RetrievalContext",
    strategy: str | None = None,
) -> list[RetrievedItem]:
    """Post-process a strategy's ranked items with the named selection (``none`` | ``sage`` |
    ``late`` | ``auto``: :func:`resolve_selection`); SAGE's items are cut as it decides."""
    ranked, keep = rank_and_keep(name, query, items, ctx, strategy)
    return ranked if keep is None else ranked[:keep]


def candidates_needed(name: str, k: int, ctx: "RetrievalContext") -> int:
    """How many items a caller should ask the strategy for before applying ``name``."""
    name = resolve_selection(name, ctx)
    if name == "sage":
        return max(k, ctx.settings.tuning.sage.n_candidates)
    if name == "late":
        from kg_platform.retrieval.rerank.weights import most_candidates

        return max(k, most_candidates(ctx.settings))
    return k
