"""The scope step: what a question searches, and the shape of it.

Document scope restricts any strategy to a few sources ("ask this document"). A user names
documents the way they know them (a title, a path, a file name, or a source id);
:func:`resolve_scope` turns those names into source ids once per call, and strategies pass the
ids to their Cypher as ``$sources`` so the restriction happens inside the query. Post-filtering
a global top-k would starve on a large corpus: the document's chunks may not be in it at all.

The scope's shape (:class:`ScopeShape`: long documents or short passages,
:mod:`kg_platform.graph.corpus_shape`) is read once per retrieval context, by
:meth:`~kg_platform.retrieval.base.RetrievalContext.shape` at the first step that needs it, and
every later step takes it from there: the strategy ``auto`` (which strategy runs), the query head
and the document rerank (whether they apply).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kg_platform.errors import RetrievalError
from kg_platform.graph.corpus_shape import corpus_counts, holds_documents, sources_counts

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient


class ScopeError(RetrievalError):
    """A scope value matched no source."""


def resolve_scope(
    graph: "GraphClient", values: Sequence[str] | None, corpus: str | None = None
) -> list[str] | None:
    """Source ids for the scope ``values`` (``None`` or empty: no scope).

    Every value must match at least one source (by id, title, uri, file name or file stem), so
    a typo fails loudly instead of silently searching nothing.
    """
    wanted = [v.strip() for v in (values or []) if v and v.strip()]
    if not wanted:
        return None
    rows = graph.read("retrieval/scope_sources", values=wanted, corpus=corpus)
    found = {r["value"]: list(r["ids"]) for r in rows}
    missing = [v for v in wanted if not found.get(v)]
    if missing:
        where = f" in corpus {corpus!r}" if corpus else ""
        raise ScopeError(
            f"no source matches the scope {', '.join(repr(m) for m in missing)}{where}",
            # no Cypher in the hint: the HTTP API and MCP would withhold it (serve.problems.scrub)
            hint="a scope value is a source id, a title, a path or a file name (as the "
            "ingestion's report names them); `kgp browser` prints the guide that lists sources",
        )
    ids: list[str] = []
    for v in wanted:
        ids.extend(i for i in found[v] if i not in ids)
    return ids


@dataclass(frozen=True)
class ScopeShape:
    """How many sources a scope holds and how many level-2 chunks they hold (counted over a
    sample of its sources, :data:`~kg_platform.graph.corpus_shape.SHAPE_SAMPLE`)."""

    sources: int
    chunks: int

    @property
    def holds_documents(self) -> bool:
        """Long documents (what ``auto`` answers with ``propagate``), not short passages."""
        return holds_documents(self.sources, self.chunks)


def read_shape(
    graph: "GraphClient", corpus: str | None, sources: Sequence[str] | None
) -> ScopeShape:
    """The shape of a scope: its document scope's sources when there is one, else its corpus,
    else the whole graph. One small read; :meth:`RetrievalContext.shape
    <kg_platform.retrieval.base.RetrievalContext.shape>` keeps it per context."""
    n_sources, n_chunks = (
        sources_counts(graph, sorted(sources)) if sources else corpus_counts(graph, corpus)
    )
    return ScopeShape(n_sources, n_chunks)
