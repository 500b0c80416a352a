"""Multi-layer score propagation (PIKE-RAG §5.5 of the spec), one Cypher query.

The query is compared with nodes of every layer through their vector indexes (level-1 chunks,
pieces, distilled atomic questions and entities, sections and sources); each layer's best score
is propagated onto the level-1 chunks it leads to (``IN``, ``ANSWERED_BY``/``MENTIONED_IN`` then
``PART_OF`` down, ``HAS_SECTION``/``HAS_CHUNK`` down) and aggregated per chunk:

* ``wsum`` (default, the spec's form): ``S(c) = sum_layer lam_layer * max_{v in layer -> c} cos``
* ``wmax``: ``S(c) = max_layer lam_layer * max_{v in layer -> c} cos``

Layers with no node reaching a chunk contribute nothing. Weights are settings
(``KGP_PROPAGATION__LAM_C`` ...); :func:`fit_weights` grid-searches them on dev questions.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, register_strategy

log = logging.getLogger(__name__)

QUERY = "retrieval/propagate_chunks"
LAYERS = ("C", "P", "D", "I")


class PropagateStrategy:
    """``propagate``: per-layer vector similarity propagated onto level-1 chunks."""

    name = "propagate"

    def __init__(self, ctx: RetrievalContext, lam: dict[str, float] | None = None,
                 aggregate: str | None = None) -> None:
        cfg = ctx.settings.propagation
        self.ctx = ctx
        self.lam = lam or {"C": cfg.lam_c, "P": cfg.lam_p, "D": cfg.lam_d, "I": cfg.lam_i}
        self.aggregate = aggregate or cfg.aggregate

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        qvec = self.ctx.embedder.embed([query])[0]
        return self.run_vector([float(x) for x in qvec], k)

    def run_vector(self, qv: list[float], k: int) -> list[RetrievedItem]:
        cfg = self.ctx.settings.propagation
        rows = self.ctx.graph.read(
            QUERY, qv=qv, fetch=max(cfg.fetch, k), k_layer=max(cfg.k_per_layer, k),
            corpus=self.ctx.corpus, lam=self.lam, aggregate=self.aggregate, k=k)
        return [self._item(r) for r in rows]

    @staticmethod
    def _item(r) -> RetrievedItem:
        per = sorted(r["per"], key=lambda x: x["layer"])
        breakdown = {f"cos_{x['layer']}": float(x["s"]) for x in per}
        breakdown.update({f"lam_{x['layer']}": float(x["lam"]) for x in per})
        path = list(dict.fromkeys([x["via"] for x in per] + [r["id"]]
                                  + ([r["source_id"]] if r["source_id"] else [])))
        return RetrievedItem(
            id=r["id"], text=r["text"] or "", score=float(r["score"]), kind="chunk",
            level=r["level"], source_id=r["source_id"], source_title=r["source_title"],
            section_title=r["section_title"], page=r["page"], tokens=r["tokens"],
            breakdown=breakdown, path=path, query=QUERY,
        )


@register_strategy("propagate", "multi-layer propagation: vector similarity of chunks, pieces, "
                   "distilled nodes, sections and sources aggregated onto level-1 chunks")
def _propagate(ctx: RetrievalContext) -> PropagateStrategy:
    return PropagateStrategy(ctx)


def rescore(per_layer: dict[str, float], lam: dict[str, float], aggregate: str) -> float:
    """The Cypher aggregation in Python (for weight fitting on cached per-layer scores)."""
    vals = [lam[layer] * s for layer, s in per_layer.items()]
    if not vals:
        return 0.0
    return max(vals) if aggregate == "wmax" else sum(vals)


def fit_weights(
    ctx: RetrievalContext,
    questions: Sequence[str],
    recall: Callable[[int, list[RetrievedItem]], float],
    k: int,
    grid: Sequence[float] = (0.0, 0.15, 0.35, 0.5, 1.0),
    aggregate: str = "wsum",
) -> tuple[dict[str, float], float]:
    """Grid-search layer weights maximising mean ``recall(question index, top-k items)``.

    Candidates and per-layer cosines come from one Cypher call per question with all weights 1
    and a wide cut; the grid is then evaluated in Python with :func:`rescore`.
    """
    wide = PropagateStrategy(ctx, lam={x: 1.0 for x in LAYERS}, aggregate="wsum")
    cached = [wide.retrieve(q, max(50, 4 * k)) for q in questions]
    best: tuple[dict[str, float], float] = ({}, -1.0)
    for combo in itertools.product(grid, repeat=len(LAYERS)):
        if not any(combo):
            continue
        lam = dict(zip(LAYERS, combo))
        total = 0.0
        for i, items in enumerate(cached):
            scored = sorted(items, key=lambda it: (-rescore(
                {key[4:]: v for key, v in it.breakdown.items() if key.startswith("cos_")},
                lam, aggregate), it.id))
            total += recall(i, scored[:k])
        mean = total / max(1, len(cached))
        if mean > best[1] + 1e-12:
            best = (lam, mean)
    return best
