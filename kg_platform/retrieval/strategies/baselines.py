"""Baseline strategies every idea is compared with: ``bm25``, ``vector`` and ``hybrid``.

All three read fixed-size level-2 chunks (``:Chunk:L2``) through our own Neo4j indexes
(the corpus's own ``chunk_text_l2`` and ``chunk_embedding_l2``). Each query still filters by
``corpus`` in Cypher, doubling the fetch until ``k`` results of the corpus are found or the index
has no more hits: on a graph not yet through `kgp init` the index is one shared by every corpus,
and Neo4j 5.26 cannot pre-filter it. With a document
scope (``ctx.sources``) the fulltext side also filters by source, its first fetch sized by the
scope's share; the vector side skips the index and scores the scope's chunks exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    chunk_item,
    register_strategy,
)
from kg_platform.graph.lucene import fulltext_query
from kg_platform.graph.params import vector_param

BASELINE_LEVEL = 2
MAX_FETCH = 20_000
RRF_K = 60


def _item(rec: Any, query: str) -> RetrievedItem:
    return chunk_item(rec, query)


def _overfetch(ctx: RetrievalContext, name: str, k: int, **params: Any) -> list[RetrievedItem]:
    """Run a ``baseline_*`` statement, doubling ``$fetch`` until k corpus hits or no more hits."""
    fetch = max(50, k * 10) if ctx.corpus else k
    if ctx.sources:
        fetch = max(fetch, ctx.scope_fetch(k, params.get("level", BASELINE_LEVEL), MAX_FETCH))
    params.pop("level", None)
    while True:
        records = ctx.graph.read(
            name, k=k, fetch=fetch, corpus=ctx.corpus, sources=ctx.sources, **params
        )
        items = [_item(r, name) for r in records if r["id"] is not None]
        raw = records[0]["raw"] if records else 0
        if len(items) >= k or raw < fetch or fetch >= MAX_FETCH:
            return items
        fetch = min(fetch * 4, MAX_FETCH)


@dataclass
class FulltextChunks:
    """BM25 (Lucene) over the chunks of one level."""

    ctx: RetrievalContext
    level: int = BASELINE_LEVEL
    name: str = "bm25"

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        q = fulltext_query(query)  # Lucene syntax escaped; "" when no word is left
        if not q:
            return []
        return _overfetch(
            self.ctx,
            "retrieval/baseline_fulltext_chunks",
            k,
            index=f"{self.ctx.index_prefix()}chunk_text_l{self.level}",
            q=q,
            level=self.level,
        )


@dataclass
class VectorChunks:
    """Cosine nearest neighbours over the chunks of one level (query embedded once)."""

    ctx: RetrievalContext
    level: int = BASELINE_LEVEL
    name: str = "vector"

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        return self.retrieve_vector(vector_param(self.ctx.embedder.embed([query])[0]), k)

    def retrieve_vector(self, vector: list[float], k: int) -> list[RetrievedItem]:
        if self.ctx.sources:
            name = "retrieval/baseline_vector_scoped"
            records = self.ctx.graph.read(
                name,
                k=k,
                level=self.level,
                qv=vector,
                corpus=self.ctx.corpus,
                sources=self.ctx.sources,
            )
            return [_item(r, name) for r in records]
        return _overfetch(
            self.ctx,
            "retrieval/baseline_vector_chunks",
            k,
            index=f"{self.ctx.index_prefix()}chunk_embedding_l{self.level}",
            qv=vector,
        )


def rrf(
    rankings: dict[str, list[RetrievedItem]], k: int, constant: int = RRF_K
) -> list[RetrievedItem]:
    """Reciprocal-rank fusion: score = sum 1 / (constant + rank); ties keep first-seen order.

    ``rankings`` maps a name (e.g. ``"vector"``) to its ranked list; each fused item keeps the
    original per-ranking scores in ``breakdown`` under that name.
    """
    fused: dict[str, RetrievedItem] = {}
    scores: dict[str, float] = {}
    for label, ranking in rankings.items():
        for rank, item in enumerate(ranking, 1):
            if item.id not in fused:
                fused[item.id] = item
                scores[item.id] = 0.0
            scores[item.id] += 1.0 / (constant + rank)
            fused[item.id].breakdown[label] = item.score
    order = sorted(fused, key=lambda i: -scores[i])  # stable: first-seen order breaks ties
    out = []
    for item_id in order[:k]:
        item = fused[item_id]
        item.score = scores[item_id]
        item.query = "rrf(retrieval/baseline_vector_chunks, retrieval/baseline_fulltext_chunks)"
        out.append(item)
    return out


@dataclass
class HybridChunks:
    """RRF of ``bm25`` and ``vector``, each ranked ``depth`` deep."""

    ctx: RetrievalContext
    level: int = BASELINE_LEVEL
    name: str = "hybrid"
    min_depth: int = 20

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        depth = max(2 * k, self.min_depth)
        lexical = FulltextChunks(self.ctx, self.level).retrieve(query, depth)
        dense = VectorChunks(self.ctx, self.level).retrieve(query, depth)
        return rrf({"vector": dense, "bm25": lexical}, k)


@register_strategy(
    "bm25", "Lucene BM25 (Neo4j fulltext) over fixed-size level-2 chunks", scoped=True
)
def _bm25(ctx: RetrievalContext) -> FulltextChunks:
    return FulltextChunks(ctx)


@register_strategy("vector", "Neo4j vector index (cosine) over level-2 chunks", scoped=True)
def _vector(ctx: RetrievalContext) -> VectorChunks:
    return VectorChunks(ctx)


@register_strategy(
    "hybrid", "reciprocal-rank fusion (k=60) of bm25 and vector over level-2 chunks", scoped=True
)
def _hybrid(ctx: RetrievalContext) -> HybridChunks:
    return HybridChunks(ctx)
