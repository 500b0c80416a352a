"""Multi-layer score propagation (PIKE-RAG paper), one Cypher query.

The query is compared with nodes of every layer through their vector indexes (level-1 chunks,
pieces, distilled atomic questions and entities, sections and sources) and, as a lexical layer
``T``, with the level-1 chunks' text through the fulltext index (BM25 divided by the query's best
BM25 score). Each layer's best score is propagated onto the level-1 chunks it leads to (``IN``,
``ANSWERED_BY``/``MENTIONED_IN`` then ``PART_OF`` down, ``HAS_SECTION``/``HAS_CHUNK`` down) and
aggregated per chunk:

* ``wsum`` (default, the PIKE-RAG paper's form): ``S(c) = sum_layer lam_layer * max_{v in layer -> c} s``
* ``wmax``: ``S(c) = max_layer lam_layer * max_{v in layer -> c} s``
* ``rrf`` (the PIKE-RAG paper's alternative): ``S(c) = sum_layer lam_layer / (60 + rank_layer(c))``

Layers with no node reaching a chunk contribute nothing. Weights are settings
(``kg_platform.tuning`` ``propagation.lam_c`` ..., shipped in ``models/propagation/layer-weights.json``); :func:`fit_weights` grid-searches them on dev questions
(``kgp lab router fit-propagation``, with a held-out part so the fitted number is not in-sample).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    chunk_item,
    register_strategy,
)
from kg_platform.graph.lucene import fulltext_query
from kg_platform.graph.params import vector_param

log = logging.getLogger(__name__)

QUERY = "retrieval/propagate_chunks"
SCOPED_QUERY = "retrieval/propagate_chunks_scoped"
LAYERS = ("C", "P", "D", "I", "T", "E")
RRF_K = 60.0


class PropagateStrategy:
    """``propagate``: per-layer vector similarity propagated onto level-1 chunks."""

    name = "propagate"

    def __init__(
        self,
        ctx: RetrievalContext,
        lam: dict[str, float] | None = None,
        aggregate: str | None = None,
    ) -> None:
        cfg = ctx.settings.tuning.propagation
        self.ctx = ctx
        self.lam = lam or {
            "C": cfg.lam_c,
            "P": cfg.lam_p,
            "D": cfg.lam_d,
            "I": cfg.lam_i,
            "T": cfg.lam_t,
            "E": cfg.lam_e,
        }
        self.aggregate = aggregate or cfg.aggregate

    def queried_layers(self) -> list[str]:
        """The layers the query asks: C always (every candidate's base score), the others when
        weighted above 0. Why not all: a layer weighted 0 adds nothing to a score, only
        candidates, yet costs an index call (the piece layer: the largest index) or, in a
        document scope, the cosine of every piece of the scope."""
        return ["C", *(x for x in LAYERS if x != "C" and self.lam.get(x, 0.0) > 0)]

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        if self.lam.get("E", 0.0) > 0 and not self.ctx.sources:
            from kg_platform.retrieval.strategies.entity import EntityStrategy

            walk = EntityStrategy(self.ctx)
            qv, seeds = walk.seeds(query)
            k_layer = max(self.ctx.settings.tuning.propagation.k_per_layer, k)
            return self.run_vector(qv, k, text=query, entity_items=walk.run(qv, seeds, k_layer))
        qvec = self.ctx.embedder.embed([query])[0]
        return self.run_vector(vector_param(qvec), k, text=query)

    def run_vector(
        self,
        qv: list[float],
        k: int,
        text: str = "",
        entity_items: list[RetrievedItem] | None = None,
    ) -> list[RetrievedItem]:
        """Propagate from the query vector ``qv``; ``text`` feeds the lexical layer (``""``: off);
        ``entity_items`` (the ``entity`` strategy's ranking) feed the entity-graph layer ``E``,
        each scored by its PageRank score over the best one."""
        cfg = self.ctx.settings.tuning.propagation
        k_layer = max(cfg.k_per_layer, k)
        fetch = self.ctx.index_fetch(k_layer, max(self.ctx.settings.retrieve.fetch, k_layer))
        query = QUERY
        layers = self.queried_layers()
        hits: list[dict[str, Any]] = []
        hops: dict[str, dict[str, float]] = {}
        if entity_items:
            best = max(it.score for it in entity_items) or 1.0
            for it in entity_items:
                hits.append({"id": it.id, "s": it.score / best, "via": it.path[0]})
                hops[it.id] = {
                    key: v
                    for key, v in it.breakdown.items()
                    if key.startswith(("seed:", "entity:"))
                }
        else:
            layers = [x for x in layers if x != "E"]
        if self.ctx.sources:
            # a scope scores its own nodes exactly; only the lexical layer needs an over-fetch
            query, fetch = SCOPED_QUERY, max(fetch, self.ctx.scope_fetch(k_layer, 1))
            layers = [x for x in layers if x != "E"]
        rows = self.ctx.graph.read(
            query,
            qv=qv,
            q=fulltext_query(text),
            fetch=fetch,
            ix=self.ctx.index_prefix(),
            k_layer=k_layer,
            corpus=self.ctx.corpus,
            sources=self.ctx.sources,
            lam=self.lam,
            layers=layers,
            aggregate=self.aggregate,
            entity_hits=hits,
            k=k,
        )
        items = [self._item(r, query) for r in rows]
        for it in items:
            if "cos_E" in it.breakdown:
                it.breakdown.update(hops.get(it.id, {}))
        return items

    @staticmethod
    def _item(r: Any, query: str = QUERY) -> RetrievedItem:
        per = sorted(r["per"], key=lambda x: x["layer"])
        # cos_T is the lexical layer's normalised BM25, kept under the same key for one shape.
        breakdown = {f"cos_{x['layer']}": float(x["s"]) for x in per}
        breakdown.update({f"rank_{x['layer']}": float(x["rank"]) for x in per})
        breakdown.update({f"lam_{x['layer']}": float(x["lam"]) for x in per})
        path = list(
            dict.fromkeys(
                [x["via"] for x in per] + [r["id"]] + ([r["source_id"]] if r["source_id"] else [])
            )
        )
        return chunk_item(r, query, breakdown=breakdown, path=path)


@register_strategy(
    "propagate",
    "multi-layer propagation: vector similarity of chunks, pieces, "
    "distilled nodes, sections and sources (+ BM25 of chunks) aggregated onto "
    "level-1 chunks",
    scoped=True,
)
def _propagate(ctx: RetrievalContext) -> PropagateStrategy:
    return PropagateStrategy(ctx)


def rescore(
    per_layer: dict[str, float],
    lam: dict[str, float],
    aggregate: str,
    ranks: dict[str, float] | None = None,
) -> float:
    """The Cypher aggregation in Python (for weight fitting on cached per-layer scores)."""
    if aggregate == "rrf":
        ranks = ranks or {}
        return sum(lam.get(layer, 0.0) / (RRF_K + ranks[layer]) for layer in per_layer)
    vals = [lam.get(layer, 0.0) * s for layer, s in per_layer.items()]
    if not vals:
        return 0.0
    return max(vals) if aggregate == "wmax" else sum(vals)


def _layer_values(item: RetrievedItem, prefix: str) -> dict[str, float]:
    return {key[len(prefix) :]: v for key, v in item.breakdown.items() if key.startswith(prefix)}


def rank_with(
    items: Sequence[RetrievedItem], lam: dict[str, float], aggregate: str
) -> list[RetrievedItem]:
    """``items`` (from a wide all-layer run) in the order ``lam`` and ``aggregate`` give them."""
    return sorted(
        items,
        key=lambda it: (
            -round(
                rescore(_layer_values(it, "cos_"), lam, aggregate, _layer_values(it, "rank_")), 9
            ),
            it.id,
        ),
    )


def fit_weights(
    ctx: RetrievalContext,
    questions: Sequence[str],
    recall: Callable[[int, list[RetrievedItem]], float],
    k: int,
    grid: Sequence[float] = (0.0, 0.15, 0.35, 0.5, 1.0),
    aggregate: str = "wsum",
    train: Sequence[int] | None = None,
    scopes: Sequence[list[str] | None] | None = None,
) -> tuple[dict[str, float], float, list[list[RetrievedItem]]]:
    """Grid-search layer weights maximising mean ``recall(question index, ranked items)``.

    Candidates and per-layer scores come from one Cypher call per question with all weights 1
    and a wide cut (:func:`layer_candidates`); the grid is then evaluated in Python
    (:func:`grid_scores`) over the questions in ``train`` (default: all). Returns the best
    weights, their mean recall on ``train`` and the cached candidates, so the caller can score
    held-out questions.
    """
    cached = layer_candidates(ctx, questions, k, scopes)
    best, score = grid_scores(cached, recall, grid, aggregate, train)[0]
    return best, score, cached


def layer_candidates(
    ctx: RetrievalContext,
    questions: Sequence[str],
    k: int,
    scopes: Sequence[list[str] | None] | None = None,
) -> list[list[RetrievedItem]]:
    """Each question's candidates with every layer weighted 1 (per-layer scores and ranks in
    their breakdowns), ``max(50, 4k)`` deep. ``scopes`` gives each question the source ids it
    is asked in (document QA: its paper, as ``kgp eval`` scopes it)."""
    wide = PropagateStrategy(ctx, lam={x: 1.0 for x in LAYERS}, aggregate="wsum")
    unscoped = ctx.sources
    cached = []
    try:
        for i, q in enumerate(questions):
            ctx.sources = scopes[i] if scopes is not None else unscoped
            cached.append(wide.retrieve(q, max(50, 4 * k)))
    finally:
        ctx.sources = unscoped
    return cached


def grid_scores(
    cached: Sequence[Sequence[RetrievedItem]],
    recall: Callable[[int, list[RetrievedItem]], float],
    grid: Sequence[float] = (0.0, 0.15, 0.35, 0.5, 1.0),
    aggregate: str = "wsum",
    train: Sequence[int] | None = None,
) -> list[tuple[dict[str, float], float]]:
    """Every weighting of the grid with its mean recall on ``train``, best first (ties: the
    earlier weighting of the grid). A layer no candidate reaches (the distilled layer before
    ``kgp distill``) is left at 0 rather than searched."""
    present = [
        x for x in LAYERS if any(f"cos_{x}" in it.breakdown for items in cached for it in items)
    ]
    train = list(range(len(cached))) if train is None else list(train)
    scored: list[tuple[dict[str, float], float]] = []
    for combo in itertools.product(grid, repeat=len(present)):
        if not any(combo):
            continue
        lam = {x: 0.0 for x in LAYERS} | dict(zip(present, combo))
        mean = sum(recall(i, rank_with(cached[i], lam, aggregate)) for i in train) / max(
            1, len(train)
        )
        scored.append((lam, round(mean, 12)))
    scored.sort(key=lambda pair: -pair[1])  # stable: grid order among equals
    return scored
