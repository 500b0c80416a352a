"""MoG: Mix-of-Granularity retrieval (MoG paper), one named Cypher query for all corpora.

For each corpus K_i (``ctx.corpus`` or every corpus in the graph), the query takes the top-k_r
chunks of every granularity level from the per-level fulltext (BM25) or vector index, maps them
down to their level-1 chunks through ``PART_OF``, scores each level-1 chunk with the corpus
router's weights (``score(c) = sum_g w[g] * t_rs(c)[g]``, ``t_rs`` normalised per level per
corpus), pools the corpora, keeps the top-k level-1 chunks and returns each one's container at
the router's level ``g_r`` (two chunks with one container count once; the next candidate moves
up). Levels the router weighs below ``mog.level_skip`` times its largest weight are not
searched (except ``g_r``). Without a trained router, a one-hot weight on
``settings.tuning.mog.fixed_level`` is used, and the result says so (``breakdown['fixed_level']``).

A plain-Python twin of this selection lives with the tests (``tests/support/reference.py``)
and checks the Cypher exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    chunk_item,
    register_strategy,
)
from kg_platform.graph.lucene import fulltext_query
from kg_platform.graph.params import vector_param

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CorpusPlan:
    """Router output for one corpus: weights over levels 1..n and the chosen level g_r."""

    corpus: str
    w: tuple[float, ...]
    g_r: int
    router_version: str | None = None  # None = no trained router, fixed level used
    router_source: str = "fixed"  # "corpus" (its own router) | "default" (shipped) | "fixed"

    def searched_levels(self, skip_below: float) -> list[int]:
        """The levels MoG queries: g_r and every level weighted at least ``skip_below`` times
        the largest weight (``mog.level_skip``; 0 searches every level, as the paper).

        Why skip the rest: a level that weighs a fifth of the router's favourite barely moves a
        chunk's score, yet costs two index queries (BM25 and vector), the bulk of a MoG query's
        time on a large graph. Relative, because only the weights' ratios
        order the results (scaling every weight changes nothing)."""
        top = max(self.w, default=0.0)
        return [g for g, w in enumerate(self.w, start=1) if w >= skip_below * top or g == self.g_r]

    def without_low_weights(self, skip_below: float) -> "CorpusPlan":
        """This plan with every weight below ``skip_below`` times the largest set to 0 (g_r's
        kept): MoGG then neither scores those hop ranges nor walks the radius they need."""
        keep = set(self.searched_levels(skip_below))
        w = tuple(x if g in keep else 0.0 for g, x in enumerate(self.w, start=1))
        return replace(self, w=w)

    def as_param(self, skip_below: float = 0.0) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "w": list(self.w),
            "g_r": self.g_r,
            "levels": self.searched_levels(skip_below),
        }


def choose_level(w: Sequence[float], zero_weight: float) -> int:
    """Eq. 2: the 1-based level with the largest weight among those not treated as zero."""
    arr = np.asarray(w, dtype=np.float64)
    masked = np.where(arr >= zero_weight, arr, -np.inf)
    if np.all(np.isinf(masked)):
        masked = arr
    return int(np.argmax(masked)) + 1


def one_hot(level: int, n: int) -> tuple[float, ...]:
    if not 1 <= level <= n:
        raise RetrievalError(
            f"fixed level {level} is outside 1..{n}",
            hint="set tuning mog.fixed_level ([lab.tuning.mog]) to a level the graph has",
        )
    return tuple(1.0 if g == level else 0.0 for g in range(1, n + 1))


def plan_for(ctx: RetrievalContext, corpus: str, qvec: np.ndarray, kind: str) -> CorpusPlan:
    """The router's weights for ``corpus`` or, without a trained router, the fixed level."""
    from kg_platform.retrieval.strategies.router import n_levels_for

    cfg = ctx.settings.tuning.mog
    n = n_levels_for(ctx.settings, kind)
    router, source = ctx.router_of(corpus, kind, n, len(qvec))
    if router is not None:
        w = tuple(float(x) for x in router.weights(qvec))
        return CorpusPlan(corpus, w, choose_level(w, cfg.zero_weight), router.version, source)
    level = cfg.fixed_level if kind == "mog" else cfg.fixed_mogg_level
    log.info(
        "no %s router for corpus %r (none trained, default off): using fixed level %d "
        "(train one with `kgp lab router train --corpus %s --dataset FILE.jsonl --kind %s`)",
        kind,
        corpus,
        level,
        corpus,
        kind,
    )
    return CorpusPlan(corpus, one_hot(level, n), level, None)


class MoGStrategy:
    """``mog``: two-step MoG selection in one Cypher query (BM25 or dense per level)."""

    name = "mog"

    def __init__(self, ctx: RetrievalContext, scoring: str | None = None) -> None:
        self.ctx = ctx
        self.scoring = scoring or ctx.settings.tuning.mog.scoring
        self.last_plans: list[CorpusPlan] = []

    @property
    def query_name(self) -> str:
        return f"retrieval/mog_{self.scoring}"

    def plans(self, query: str) -> tuple[list[CorpusPlan], np.ndarray]:
        qvec = self.ctx.embedder.embed([query])[0]
        return [plan_for(self.ctx, c, qvec, "mog") for c in self.ctx.corpora()], qvec

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        plans, qvec = self.plans(query)
        self.last_plans = plans
        return self.run(query, k, plans, qvec)

    def run(
        self, query: str, k: int, plans: Sequence[CorpusPlan], qvec: np.ndarray | None = None
    ) -> list[RetrievedItem]:
        cfg = self.ctx.settings.tuning.mog
        # k_r is raised to k: with fewer candidates per level than k, MoG could not fill k.
        k_r = max(cfg.k_r, k)
        fetch = self.ctx.index_fetch(
            k_r, max(self.ctx.settings.retrieve.fetch, k_r), [p.corpus for p in plans]
        )
        if self.ctx.sources and self.scoring != "dense":
            fetch = max(fetch, self.ctx.scope_fetch(k_r, 1))
        params = dict(
            plan=[
                {**p.as_param(cfg.level_skip), "ix": self.ctx.index_prefix(p.corpus)} for p in plans
            ],
            k_r=k_r,
            fetch=fetch,
            normalise=cfg.normalise,
            k=k,
            sources=self.ctx.sources,
        )
        if self.scoring in ("dense", "hybrid"):
            if qvec is None:
                qvec = self.ctx.embedder.embed([query])[0]
            params["qv"] = vector_param(qvec)
        if self.scoring in ("bm25", "hybrid"):
            params["q"] = fulltext_query(query) or ""
            if not params["q"] and self.scoring == "bm25":
                return []
        rows = self.ctx.graph.read(self.query_name, **params)
        by_corpus = {p.corpus: p for p in plans}
        return [self._item(r, by_corpus[r["corpus"]]) for r in rows]

    def _item(self, r: Any, plan: CorpusPlan) -> RetrievedItem:  # r: a neo4j Record
        breakdown: dict[str, float] = {}
        for x in sorted(r["per"], key=lambda x: x["g"]):
            breakdown[f"t_L{x['g']}"] = float(x["t"])
            breakdown[f"raw_L{x['g']}"] = float(x["raw"])
        for g, w in enumerate(plan.w, start=1):
            breakdown[f"w_L{g}"] = float(w)
        if plan.router_version is None:
            breakdown["fixed_level"] = float(plan.g_r)
        else:
            breakdown["router_level"] = float(plan.g_r)
            if plan.router_source == "default":
                breakdown["default_router"] = 1.0
        path = [r["finest"], *[x["p"] for x in sorted(r["per"], key=lambda x: x["g"])], r["id"]]
        path = list(dict.fromkeys(path + ([r["source_id"]] if r["source_id"] else [])))
        return chunk_item(r, self.query_name, breakdown=breakdown, path=path)


@register_strategy(
    "mog",
    "Mix-of-Granularity: per-level BM25 (or dense) -> router-weighted "
    "level-1 scores -> containers at the router's level, one Cypher query",
    scoped=True,
    every_corpus=True,
)
def _mog(ctx: RetrievalContext) -> MoGStrategy:
    return MoGStrategy(ctx)


@register_strategy(
    "mog-dense",
    "MoG scored with the per-level vector indexes",
    scoped=True,
    every_corpus=True,
)
def _mog_dense(ctx: RetrievalContext) -> MoGStrategy:
    return MoGStrategy(ctx, scoring="dense")


@register_strategy(
    "mog-bm25",
    "MoG scored with the per-level fulltext (BM25) indexes only, as in the paper",
    scoped=True,
    every_corpus=True,
)
def _mog_bm25(ctx: RetrievalContext) -> MoGStrategy:
    return MoGStrategy(ctx, scoring="bm25")
