"""Writes planned sources to Neo4j: a whole group of sources in one managed transaction.

Why one transaction per group (and never part of a source): a reader sees a source's old version
or its new one, never a half-written mix or a source without its chunks, and a crash or Ctrl-C
rolls the open transaction back, so the next run finds the source unchanged-or-absent and redoes
it (sources already committed are skipped by hash). Small sources (QA paragraphs, short pages)
are grouped up to ``ingest.transaction_rows`` nodes because a transaction costs a round trip and a
commit; a big source is one transaction of its own, bounded by ``ingest.max_source_tokens``. At
that bound (2M tokens, ~16k level-1 chunks) the transaction state stays in the hundreds of MB of
the server's heap; the UNWIND lists inside it are cut at ``ingest.write_batch_size`` rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from neo4j import ManagedTransaction

from kg_platform.corpus_name import corpus_key
from kg_platform.distilling.runner import remove_distillation_tx
from kg_platform.granularity.bm25 import piece_terms
from kg_platform.graph.client import GraphClient
from kg_platform.graph.corpus_indexes import (
    corpus_prefix,
    drop_corpus_indexes,
    ensure_corpus_indexes,
)
from kg_platform.graph.cypher import cypher
from kg_platform.ingest.rows import (
    LINK_FIELDS,
    ChunkRow,
    PieceRow,
    SectionRow,
    SourcePlan,
    SourceRow,
)
from kg_platform.graph.params import vector_param

__all__ = ["write_plans", "delete_sources", "drop_corpus"]


def _run_batches(
    tx: ManagedTransaction, name: str, rows: Sequence[Any], size: int, **params: Any
) -> None:
    query = cypher(name)
    for start in range(0, len(rows), size):
        tx.run(query, rows=list(rows[start : start + size]), **params).consume()


@dataclass(frozen=True, slots=True)
class _Parameters:
    """The ``$rows`` lists of one write transaction, as the ``ingest/*`` Cypher expects them."""

    sources: list[dict[str, Any]]
    sections: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    pieces: list[dict[str, Any]]
    part_of: list[dict[str, str]]
    chunk_next: list[dict[str, str]]
    piece_next: list[dict[str, str]]


_PROPERTY_NAMES: dict[type, tuple[str, ...]] = {}


def _property_names(row_type: type) -> tuple[str, ...]:
    """The stored property names of a row type: its fields but the links, in field order
    (read once per type: ``dataclasses.fields`` costs more than copying a row's values)."""
    names = _PROPERTY_NAMES.get(row_type)
    if names is None:
        names = tuple(f.name for f in fields(row_type) if f.name not in LINK_FIELDS)
        _PROPERTY_NAMES[row_type] = names
    return names


def _properties(row: SourceRow | SectionRow | ChunkRow | PieceRow) -> dict[str, Any]:
    """A node row's stored properties: every field but the links (tuples as lists)."""
    props: dict[str, Any] = {}
    for name in _property_names(type(row)):
        value = getattr(row, name)
        props[name] = list(value) if isinstance(value, tuple) else value
    return props


def _parameters(plans: Sequence[SourcePlan]) -> _Parameters:
    """The one place typed rows and their vectors become the parameter dicts of the Cypher."""
    return _Parameters(
        sources=[
            {
                "id": p.source.id,
                "corpus": p.source.corpus,
                "props": _properties(p.source),
                "embedding": vector_param(p.vectors[p.source.id]),
            }
            for p in plans
        ],
        sections=[
            {
                "id": s.id,
                "parent_id": s.parent_id,
                "props": _properties(s),
                "embedding": vector_param(p.vectors[s.id]),
            }
            for p in plans
            for s in p.sections
        ],
        chunks=[
            {
                "id": c.id,
                "level": c.level,
                "section_id": c.section_id,
                "props": _properties(c),
                "embedding": vector_param(p.vectors[c.id]),
            }
            for p in plans
            for c in p.chunks
        ],
        pieces=[
            {
                "id": x.id,
                "chunk_id": x.chunk_id,
                "props": _properties(x),
                "embedding": vector_param(p.vectors[x.id]),
                "terms": piece_terms(x.text or ""),
            }
            for p in plans
            for x in p.pieces
        ],
        part_of=[{"child": r.child, "parent": r.parent} for p in plans for r in p.part_of],
        chunk_next=[{"a": r.a, "b": r.b} for p in plans for r in p.chunk_next],
        piece_next=[{"a": r.a, "b": r.b} for p in plans for r in p.piece_next],
    )


def write_plans(graph: GraphClient, plans: Sequence[SourcePlan], run_id: str) -> None:
    """Replace (or create) every planned source, all in one transaction."""
    if not plans:
        return
    size = graph.batch_size
    source_ids = [p.source.id for p in plans]
    rows = _parameters(plans)
    key = corpus_key(plans[0].source.corpus)
    # the corpus's own indexes first (schema cannot change inside the data transaction)
    ensure_corpus_indexes(graph, plans[0].source.corpus)
    ix = corpus_prefix(plans[0].source.corpus)

    def work(tx: ManagedTransaction) -> None:
        # Corpus lock and version bump first, so the piece-graph sync sees this write
        for corpus in sorted({p.source.corpus for p in plans}):
            tx.run(cypher("ingest/mark_corpus_dirty"), corpus=corpus).consume()
        # distilled facts of a replaced source (entity mentions, relations, tags) go with it
        remove_distillation_tx(tx, source_ids, plans[0].source.corpus)
        tx.run(cypher("ingest/reopen_similar_neighbours"), source_ids=source_ids).consume()
        tx.run(cypher("ingest/delete_source_content"), source_ids=source_ids).consume()
        _run_batches(tx, "ingest/upsert_sources", rows.sources, size, run_id=run_id)
        _run_batches(tx, "ingest/create_sections", rows.sections, size, ix=ix)
        _run_batches(tx, "ingest/create_chunks", rows.chunks, size, ix=ix)
        _run_batches(tx, "ingest/link_part_of", rows.part_of, size)
        _run_batches(tx, "ingest/link_chunk_next", rows.chunk_next, size)
        _run_batches(tx, "ingest/create_pieces", rows.pieces, size, corpus_key=key, ix=ix)
        _run_batches(tx, "ingest/link_piece_next", rows.piece_next, size)

    graph.in_transaction(work)


def delete_sources(graph: GraphClient, corpus: str, source_ids: Sequence[str]) -> None:
    """Remove sources and everything below them in one transaction (``--prune``)."""
    if not source_ids:
        return

    def work(tx: ManagedTransaction) -> None:
        tx.run(cypher("ingest/mark_corpus_dirty"), corpus=corpus).consume()
        remove_distillation_tx(tx, list(source_ids), corpus)
        tx.run(cypher("ingest/reopen_similar_neighbours"), source_ids=list(source_ids)).consume()
        tx.run(cypher("ingest/delete_source_content"), source_ids=list(source_ids)).consume()
        tx.run(cypher("ingest/delete_sources"), source_ids=list(source_ids)).consume()

    graph.in_transaction(work)


def drop_corpus(graph: GraphClient, corpus: str) -> int:
    """Delete a whole corpus (sources, everything below, run records, trained routers); return
    sources deleted. Sources carrying the corpus's name but no longer linked from its Corpus
    node (it was deleted by hand, say) go too: ``source_states`` walks from that node."""
    ids = [r["id"] for r in graph.read("ingest/source_states", corpus=corpus)]
    ids += [r["id"] for r in graph.read("ingest/unlinked_sources", corpus=corpus)]
    for start in range(0, len(ids), 200):
        delete_sources(graph, corpus, ids[start : start + 200])
    graph.write("ingest/delete_corpus_meta", corpus=corpus)
    drop_corpus_indexes(graph, corpus)
    return len(ids)
