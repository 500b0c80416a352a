"""MoGG: MoG over the sentence-piece graph (MoGG, in the MoG paper), hop radius as granularity.

Level g of a centre piece is the piece plus every piece within ``g - 1`` hops over ``SIMILAR``
(undirected), each piece once, filled nearest hops first (then higher edge weight) up to the
token cap, emitted in document order. Groups are expanded at query time around seed pieces (no
materialised groups: they would multiply the stored text by the hop radius and go stale on
every ingest). Seeds come from the piece fulltext index (BM25), the piece
vector index, or both (``settings.tuning.mog.mogg_seed_index``; a seed's score is the sum of its
normalised scores); a group's score is the sum of the seed scores of its members (query-time
stand-in for scoring the group's text). The two-step selection is MoG's: top-k_r groups per level
(k_r raised to k when k is larger, so k results can exist) -> t_rs(piece)[g] = best normalised
score of a retrieved level-g group holding the piece -> router-weighted score -> top pieces ->
the level-g_r group centred on each, skipping a candidate that an earlier kept group already
holds and dropping from a later group the pieces an earlier one holds (each piece once).

A hop follows ``SIMILAR`` edges, and with ``mog.mogg_hops = "similar+next"`` also ``NEXT`` (the
neighbouring piece in the document, weight 1.0): on long papers a group over similarity alone
gathers sentences from anywhere in the paper and reads as no passage. ``auto`` (the default) follows NEXT too when the searched documents are
long (:meth:`MoGGStrategy.hops`). Cypher path bounds and relationship types cannot be
parameters, so there is one named query per radius and hop set (``retrieval/mogg_r0..r3``,
``retrieval/mogg_next_r0..r3``), all rendered from ``retrieval/mogg.cypher.template``
(``python -m kg_platform.retrieval.strategies.mogg`` rewrites them; a test checks they are in sync); the
file used is the largest radius that has a non-zero weight. A plain-Python twin of the
computation lives with the tests (``tests/support/reference.py``) and checks it exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, register_strategy
from kg_platform.graph.lucene import fulltext_query
from kg_platform.graph.params import vector_param
from kg_platform.retrieval.strategies.mog import CorpusPlan, plan_for

log = logging.getLogger(__name__)
MAX_RADIUS = 3


def radius_needed(plans: Sequence[CorpusPlan], zero_weight: float) -> int:
    """Largest hop radius any corpus needs: its chosen level and every non-zero weight."""
    r = 0
    for p in plans:
        r = max(r, p.g_r - 1, *[g - 1 for g, w in enumerate(p.w, 1) if w >= zero_weight])
    if r > MAX_RADIUS:
        raise RetrievalError(
            f"MoGG radius {r} exceeds the supported {MAX_RADIUS}",
            hint="set tuning mog.mogg_levels ([lab.tuning.mog]) to 4 or less",
        )
    return r


class MoGGStrategy:
    """``mogg``: hop-range groups over SIMILAR, router-weighted, one Cypher query per radius."""

    name = "mogg"

    def __init__(self, ctx: RetrievalContext) -> None:
        self.ctx = ctx
        self.last_plans: list[CorpusPlan] = []
        self.last_query = ""

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        qvec = self.ctx.embedder.embed([query])[0]
        skip = self.ctx.settings.tuning.mog.mogg_level_skip
        plans = [
            plan_for(self.ctx, c, qvec, "mogg").without_low_weights(skip)
            for c in self.ctx.corpora()
        ]
        self.last_plans = plans
        return self.run(query, k, plans, qvec)

    def params(
        self, query: str, k: int, plans: Sequence[CorpusPlan], qvec: np.ndarray | None = None
    ) -> dict[str, Any]:
        cfg = self.ctx.settings.tuning.mog
        lexical = cfg.mogg_seed_index in ("bm25", "hybrid")
        dense = cfg.mogg_seed_index in ("vector", "hybrid")
        if dense and qvec is None:
            qvec = self.ctx.embedder.embed([query])[0]
        return dict(
            q=fulltext_query(query) if lexical else "",
            qv=vector_param(qvec) if dense and qvec is not None else None,
            plan=[{**p.as_param(), "ix": self.ctx.index_prefix(p.corpus)} for p in plans],
            seeds=cfg.mogg_seeds,
            fetch=self._fetch(plans),
            sources=self.ctx.sources,
            k_r=max(cfg.k_r, k),
            normalise=cfg.normalise,
            cap=cfg.mogg_group_tokens,
            cand=k * cfg.mogg_candidates_factor,
            k=k,
        )

    def hops(self, plans: Sequence[CorpusPlan]) -> str:
        """The hop set: ``mog.mogg_hops``, or with ``auto`` ``similar+next`` when the median
        searched document (the scope's, else a sample of each corpus's) is long.

        Why: in short paragraphs (multi-hop QA) a SIMILAR hop reaches the other paragraphs a
        question needs, and NEXT only re-reads the same one, crowding those out; in a long paper
        SIMILAR neighbours lie anywhere, and NEXT makes a group a passage. The two kinds of
        corpus are far apart in length (QA paragraphs: about a hundred tokens; papers:
        thousands), so one median threshold separates them."""
        cfg = self.ctx.settings.tuning.mog
        if cfg.mogg_hops != "auto":
            return cfg.mogg_hops
        median = self.ctx.median_source_tokens([p.corpus for p in plans])
        return "similar+next" if median >= cfg.mogg_next_min_tokens else "similar"

    def _fetch(self, plans: Sequence[CorpusPlan]) -> int:
        """Index hits per seed list: sized by the corpus share, or by the scope's share of the
        pieces' chunks in a document scope (the piece fulltext index cannot filter by source)."""
        cfg = self.ctx.settings.tuning.mog
        fetch = self.ctx.index_fetch(
            cfg.mogg_seeds, self.ctx.settings.retrieve.fetch, [p.corpus for p in plans]
        )
        if self.ctx.sources:
            fetch = max(fetch, self.ctx.scope_fetch(cfg.mogg_seeds, 1))
        return fetch

    def run(
        self, query: str, k: int, plans: Sequence[CorpusPlan], qvec: np.ndarray | None = None
    ) -> list[RetrievedItem]:
        params = self.params(query, k, plans, qvec)
        if not params["q"] and params["qv"] is None:
            return []
        radius = radius_needed(plans, self.ctx.settings.tuning.mog.zero_weight)
        name = query_name(radius, self.hops(plans))
        self.last_query = name
        rows = self.ctx.graph.read(name, **params)
        by_corpus = {p.corpus: p for p in plans}
        return [self._item(r, by_corpus[r["corpus"]], name) for r in rows]

    @staticmethod
    def _item(r: Any, plan: CorpusPlan, name: str) -> RetrievedItem:  # r: a neo4j Record
        breakdown = {f"t_L{x['g']}": float(x["t"]) for x in sorted(r["per"], key=lambda x: x["g"])}
        breakdown.update({f"w_L{g}": float(w) for g, w in enumerate(plan.w, 1)})
        if plan.router_version is None:
            breakdown["fixed_level"] = float(plan.g_r)
        else:
            breakdown["router_level"] = float(plan.g_r)
            if plan.router_source == "default":
                breakdown["default_router"] = 1.0
        return RetrievedItem(
            id=r["id"],
            text=" ".join(t.strip() for t in r["texts"] if t),
            score=float(r["score"]),
            kind="group",
            level=r["level"],
            source_id=(r["sources"] or [None])[0],
            source_title=r["source_title"],
            tokens=r["tokens"],
            breakdown=breakdown,
            path=list(r["members"]),
            query=name,
        )


@register_strategy(
    "mogg",
    "MoG over the piece graph: BM25 + vector seed pieces -> SIMILAR hop groups "
    "per level -> router-weighted two-step selection, one Cypher query per radius",
    scoped=True,
    every_corpus=True,
)
def _mogg(ctx: RetrievalContext) -> MoGGStrategy:
    return MoGGStrategy(ctx)


# ------------------------------------------------------------------ the per-radius Cypher files
TEMPLATE = "retrieval/mogg.cypher.template"
#: ``mog.mogg_hops`` -> (relationship types a hop may follow, query file prefix)
HOPS: dict[str, tuple[str, str]] = {
    "similar": ("SIMILAR", "mogg_r"),
    "similar+next": ("SIMILAR|NEXT", "mogg_next_r"),
}


def query_name(radius: int, hops: str = "similar") -> str:
    """The named query for ``radius`` over the ``hops`` relationship set."""
    return f"retrieval/{HOPS[hops][1]}{radius}"


def render_query(radius: int, hops: str = "similar") -> str:
    """The text of the query for ``radius`` and ``hops``: the template with the integer bounds
    and relationship types filled in (our constants, never user input; Cypher cannot take them
    as parameters)."""
    from importlib import resources

    if not 0 <= radius <= MAX_RADIUS:
        raise RetrievalError(f"MoGG radius {radius} is outside 0..{MAX_RADIUS}")
    if hops not in HOPS:
        raise RetrievalError(f"MoGG hops {hops!r} is not one of {', '.join(HOPS)}")
    text = resources.files("kg_platform").joinpath("cypher", TEMPLATE).read_text(encoding="utf-8")
    return (
        text.replace("{radius}", str(radius))
        .replace("{levels}", str(radius + 1))
        .replace("{hops}", HOPS[hops][0])
    )


def write_queries() -> list[str]:
    """Rewrite every ``cypher/retrieval/mogg*_r<radius>.cypher`` from the template (run after
    editing it)."""
    from importlib import resources

    folder = resources.files("kg_platform").joinpath("cypher")
    written = []
    for hops in HOPS:
        for radius in range(MAX_RADIUS + 1):
            path = folder.joinpath(query_name(radius, hops) + ".cypher")
            Path(str(path)).write_text(render_query(radius, hops), encoding="utf-8")
            written.append(str(path))
    return written


if __name__ == "__main__":
    for written_path in write_queries():
        print(written_path)
