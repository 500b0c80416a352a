"""Peer strategies: Neo4j's own ``neo4j-graphrag`` retrievers over *our* indexes.

``peer-neo4j-graphrag-vector`` runs ``VectorRetriever`` on ``chunk_embedding_l2`` and
``peer-neo4j-graphrag-hybrid`` runs ``HybridRetriever`` (its default "naive" ranker: each index's
scores divided by that index's max, then the max per node) on ``chunk_embedding_l2`` +
``chunk_text_l2``. Both are measured on the same database, chunks and embedder as our baselines,
so the comparison is about the retrieval logic only.

Known differences, on purpose:

* each retriever is given the corpus's own indexes (``ck<hash>_chunk_embedding_l2``, ...: a
  corpus's nodes are in no other index), as a user with one corpus per database has them; the
  ``corpus`` filter in Python (doubling the fetch while too few survive) stays for graphs whose
  corpora are not yet through `kgp init`;
* with a document scope (``ctx.sources``) the vector peer uses the library's own pre-filter
  (``filters={"source_id": {"$in": ids}}``, an exact search over the matching nodes); the hybrid
  peer has no filter, so its hits are filtered by source in Python, fetching up to
  ``MAX_FETCH`` hits per index (the library's limitation, reported as is);
* ``HybridRetriever`` passes the text to Lucene unescaped and fails on operator characters, so
  the fulltext side receives the question with Lucene syntax escaped, while the vector side gets
  the embedding of the original question (passed as ``query_vector``).

Needs neo4j-graphrag, one of the lab's dependencies (``pip install -e lab/``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from kg_platform.errors import RetrievalError
from kg_platform.retrieval.base import RetrievalContext, RetrievedItem, register_strategy
from kg_platform.retrieval.strategies.baselines import BASELINE_LEVEL, MAX_FETCH
from kg_platform.graph.lucene import fulltext_query

RETURN_PROPERTIES = ["id", "text", "corpus", "level", "source_id", "tokens"]


def _require_graphrag() -> Any:
    try:
        import neo4j_graphrag  # noqa: F401
        from neo4j_graphrag.embeddings.base import Embedder as GraphragEmbedder
    except ModuleNotFoundError as exc:
        raise RetrievalError(
            "peer strategies need the neo4j-graphrag package",
            hint="pip install -e lab/ (neo4j-graphrag is one of the lab's dependencies)",
        ) from exc
    return GraphragEmbedder


def graphrag_embedder(embedder: Any) -> Any:
    """Our :class:`~kg_platform.embedding.Embedder` behind neo4j-graphrag's ``Embedder`` ABC."""
    base = _require_graphrag()

    class _Adapter(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.inner = embedder

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in self.inner.embed([text])[0]]

    return _Adapter()


@dataclass
class GraphragPeer:
    """Runs one neo4j-graphrag retriever and keeps the hits of the evaluated corpus."""

    ctx: RetrievalContext
    hybrid: bool
    name: str = ""
    level: int = BASELINE_LEVEL
    _retriever: Any = field(default=None, init=False, repr=False)
    _vector: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        _require_graphrag()
        from neo4j_graphrag.retrievers import HybridRetriever, VectorRetriever

        embedder = graphrag_embedder(self.ctx.embedder)
        vector_index = f"{self.ctx.index_prefix()}chunk_embedding_l{self.level}"
        try:
            if self.hybrid:
                self._retriever = HybridRetriever(
                    self.ctx.graph.driver,
                    vector_index_name=vector_index,
                    fulltext_index_name=f"{self.ctx.index_prefix()}chunk_text_l{self.level}",
                    embedder=embedder,
                    return_properties=RETURN_PROPERTIES,
                    neo4j_database=self.ctx.graph.database,
                )
            else:
                self._retriever = VectorRetriever(
                    self.ctx.graph.driver,
                    index_name=vector_index,
                    embedder=embedder,
                    return_properties=RETURN_PROPERTIES,
                    neo4j_database=self.ctx.graph.database,
                )
        except Exception as exc:  # the library raises its own error types
            raise RetrievalError(
                f"neo4j-graphrag could not build its retriever over {vector_index}: {exc}",
                hint="run `kgp init` so the indexes exist, and ingest a corpus first",
            ) from exc

    def _vector_only(self) -> Any:
        """A VectorRetriever over the same index, for questions Lucene cannot search."""
        if self._vector is None:
            from neo4j_graphrag.retrievers import VectorRetriever

            self._vector = VectorRetriever(
                self.ctx.graph.driver,
                index_name=f"{self.ctx.index_prefix()}chunk_embedding_l{self.level}",
                embedder=graphrag_embedder(self.ctx.embedder),
                return_properties=RETURN_PROPERTIES,
                neo4j_database=self.ctx.graph.database,
            )
        return self._vector

    def _search(self, query: str, vector: list[float], top_k: int) -> list[Any]:
        with warnings.catch_warnings():
            # neo4j-graphrag 1.x warns that its own 'id' column (an elementId) is deprecated;
            # we read our id from the node's properties.
            warnings.simplefilter("ignore", DeprecationWarning)
            return self._search_records(query, vector, top_k)

    def _search_records(self, query: str, vector: list[float], top_k: int) -> list[Any]:
        text = fulltext_query(query)
        if self.hybrid and text:
            raw = self._retriever.get_search_results(
                query_text=text, query_vector=vector, top_k=top_k
            )
        elif self.ctx.sources:
            # scoped: the vector side with a source filter (a hybrid peer with nothing
            # searchable for Lucene lands here too)
            retriever = self._vector_only() if self.hybrid else self._retriever
            raw = retriever.get_search_results(
                query_vector=vector,
                top_k=top_k,
                filters={"source_id": {"$in": list(self.ctx.sources)}},
            )
        elif self.hybrid:
            # nothing searchable for Lucene (punctuation only, or empty): the vector side alone
            raw = self._vector_only().get_search_results(query_vector=vector, top_k=top_k)
        else:
            raw = self._retriever.get_search_results(query_vector=vector, top_k=top_k)
        return list(raw.records)

    def _keep(self, rec: Any) -> bool:
        node = rec["node"]
        if self.ctx.corpus is not None and node.get("corpus") != self.ctx.corpus:
            return False
        return not self.ctx.sources or node.get("source_id") in self.ctx.sources

    def retrieve(self, query: str, k: int) -> list[RetrievedItem]:
        vector = [float(x) for x in self.ctx.embedder.embed([query])[0]]
        fetch = max(50, k * 10) if self.ctx.corpus else k
        if self.ctx.sources and self.hybrid:
            fetch = max(fetch, self.ctx.scope_fetch(k, self.level, MAX_FETCH))
        while True:
            records = self._search(query, vector, fetch)
            kept = [r for r in records if self._keep(r)]
            # The hybrid query returns up to top_k from each index, so "exhausted" means fewer
            # than top_k rows came back in total.
            if len(kept) >= k or len(records) < fetch or fetch >= MAX_FETCH:
                break
            fetch = min(fetch * 4, MAX_FETCH)
        return [self._item(r) for r in kept[:k]]

    def _item(self, rec: Any) -> RetrievedItem:
        node = rec["node"]
        return RetrievedItem(
            id=node.get("id") or rec["elementId"],
            text=node.get("text") or "",
            score=float(rec["score"]),
            kind="chunk",
            level=node.get("level"),
            source_id=node.get("source_id"),
            tokens=node.get("tokens"),
            query=f"neo4j_graphrag.{type(self._retriever).__name__}",
        )


@register_strategy(
    "peer-neo4j-graphrag-vector",
    "neo4j-graphrag VectorRetriever over chunk_embedding_l2 (extra: peers)",
    scoped=True,
)
def _peer_vector(ctx: RetrievalContext) -> GraphragPeer:
    return GraphragPeer(ctx, hybrid=False, name="peer-neo4j-graphrag-vector")


@register_strategy(
    "peer-neo4j-graphrag-hybrid",
    "neo4j-graphrag HybridRetriever over chunk_embedding_l2 + chunk_text_l2 (extra: peers)",
    scoped=True,
)
def _peer_hybrid(ctx: RetrievalContext) -> GraphragPeer:
    return GraphragPeer(ctx, hybrid=True, name="peer-neo4j-graphrag-hybrid")
