"""Strategy ``atomic``: PIKE-RAG's hierarchical retrieval over atomic questions (PIKE-RAG paper).

Two paths, unioned ("H-R"): (a) query -> chunks directly (vector index of the distilled level)
and (b) query -> nearest atomic questions -> the chunks they were asked of. A chunk's score is the
best cosine over both paths; ``breakdown`` keeps each path's cosine and ``path`` the atomic
questions that found it, so a user can follow the evidence in Neo4j Browser. Both paths use the
same embedder, so their cosines are comparable. The strategy refuses to run on a corpus that has
no atomic questions (it would silently be the plain ``vector`` baseline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import (
    RetrievalContext,
    RetrievedItem,
    chunk_item,
    register_strategy,
)
from kg_platform.graph.params import vector_param


@dataclass
class AtomicRetriever:
    ctx: RetrievalContext
    name: str = "atomic"
    direct: bool = True  # include path (a)
    _checked: bool = field(default=False, repr=False)

    @property
    def level(self) -> int:
        return min(self.ctx.settings.tuning.distill.levels)

    def _check(self) -> None:
        if self._checked:
            return
        rec = self.ctx.graph.read("distill/corpus_has_atoms", corpus=self.ctx.corpus)
        if not rec or not rec[0]["has_atoms"]:
            where = f"corpus {self.ctx.corpus!r}" if self.ctx.corpus else "the graph"
            raise RetrievalError(
                f"strategy 'atomic' needs atomic questions, and {where} has none",
                hint="configure an LLM and run `kgp distill --corpus NAME --steps atomic`",
            )
        self._checked = True

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        self._check()
        qv = vector_param(self.ctx.embedder.embed([query])[0])
        fetch = max(100, 12 * k) if self.ctx.corpus else max(20, 4 * k)
        found: dict[str, RetrievedItem] = {}
        for rec in self.ctx.graph.read(
            "distill/retrieve_atoms",
            qv=qv,
            k=k,
            fetch=fetch,
            corpus=self.ctx.corpus,
            ix=self.ctx.index_prefix(),
        ):
            if rec["id"] is None:
                continue
            found[rec["id"]] = chunk_item(
                rec,
                "distill/retrieve_atoms",
                breakdown={"atomic": float(rec["score"])},
                path=rec["atoms"] or [],
            )
        if self.direct:
            from kg_platform.retrieval.strategies.baselines import VectorChunks

            for item in VectorChunks(self.ctx, level=self.level).retrieve_vector(qv, k):
                prev = found.get(item.id)
                if prev is None:
                    item.breakdown = {"direct": item.score}
                    found[item.id] = item
                else:
                    prev.breakdown["direct"] = item.score
                    prev.score = max(prev.score, item.score)
        ranked = sorted(found.values(), key=lambda it: (-it.score, it.id))
        return ranked[:k]


@register_strategy(
    "atomic",
    "PIKE-RAG hierarchical retrieval: query -> atomic questions -> "
    "chunks, unioned with the direct chunk path (needs `kgp distill`)",
)
def _atomic(ctx: RetrievalContext) -> AtomicRetriever:
    return AtomicRetriever(ctx)


@register_strategy("atomic-only", "PIKE-RAG path (b) alone: query -> atomic questions -> chunks")
def _atomic_only(ctx: RetrievalContext) -> AtomicRetriever:
    return AtomicRetriever(ctx, name="atomic-only", direct=False)


@dataclass
class TaggedRetriever:
    """Auto-tagging's query path (PIKE-RAG paper): the LLM tags the query, the tags map onto
    corpus tags (exact, stored mappings, else the LLM's mapping), and the chunks carrying them
    rank by the summed confidence of their tags. One or two LLM calls per new query (cached)."""

    ctx: RetrievalContext
    name: str = "tags"
    _tagger: object = field(default=None, repr=False)

    def _get_tagger(self) -> Any:  # QueryTagger, imported lazily
        if self._tagger is None:
            from kg_platform.distilling.tagging import QueryTagger
            from kg_platform.llm import get_llm

            if not self.ctx.corpus:
                raise RetrievalError(
                    "strategy 'tags' works on one corpus", hint="name the corpus to retrieve from"
                )
            llm = get_llm(self.ctx.settings)
            if llm is None:
                raise RetrievalError(
                    "strategy 'tags' tags the query with the LLM, and no LLM is configured",
                    hint="set KGP_LLM__BASE_URL and KGP_LLM__MODEL",
                )
            tagger = QueryTagger(self.ctx.graph, llm, self.ctx.settings, self.ctx.corpus)
            if not tagger.classes:
                raise RetrievalError(
                    f"corpus {self.ctx.corpus!r} has no tags",
                    hint="run `kgp distill --corpus NAME --steps tags`",
                )
            self._tagger = tagger
        return self._tagger

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        rows = self._get_tagger().chunks_for(query, k)
        return [
            chunk_item(
                r, "distill/tagged_chunks", breakdown={"tags": float(r["score"])}, path=r["via"]
            )
            for r in rows
        ]


@dataclass
class AtomicTagged:
    """RRF of ``atomic`` (H-R) and the ``tags`` path: PIKE-RAG's L1+L2 distilled retrieval."""

    ctx: RetrievalContext
    name: str = "atomic-tags"

    def __post_init__(self) -> None:
        self._atomic = AtomicRetriever(self.ctx)
        self._tags = TaggedRetriever(self.ctx)

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        from kg_platform.retrieval.strategies.baselines import rrf

        depth = max(2 * k, 20)
        fused = rrf(
            {
                "atomic": self._atomic.retrieve(query, depth),
                "tags": self._tags.retrieve(query, depth),
            },
            k,
        )
        for item in fused:
            item.query = "rrf(distill/retrieve_atoms + vector, distill/tagged_chunks)"
        return fused


@register_strategy(
    "tags",
    "auto-tagging path: LLM query tags -> mapped corpus tags -> tagged "
    "chunks (needs an LLM and `kgp distill --steps tags`)",
)
def _tags(ctx: RetrievalContext) -> TaggedRetriever:
    return TaggedRetriever(ctx)


@register_strategy("atomic-tags", "RRF of `atomic` and `tags` (needs an LLM and `kgp distill`)")
def _atomic_tags(ctx: RetrievalContext) -> AtomicTagged:
    return AtomicTagged(ctx)
