"""Long documents or short passages: the shape of a corpus, read from how many level-2 chunks
its sources hold (a QASPER paper ~30, a HotpotQA paragraph 1).

Two decisions read it: the strategy ``auto`` retrieval runs (``propagate`` over documents, the
entity walk or ``mogg`` over passages), and whether ingestion builds the NLP distilled layer by
default (``distill.nlp_on_ingest = auto``: over passages, where that walk reads it). One count
over a sample of at most :data:`SHAPE_SAMPLE` sources keeps the cost flat however large the
corpus grows; the kind of corpus shows in any few dozen of its sources.
"""

from __future__ import annotations

from neo4j import Record

from kg_platform.graph.client import GraphClient

#: level-2 chunks per source from which a scope counts as long documents
DOCUMENT_CHUNKS_PER_SOURCE = 4.0
#: sources counted to tell passages from documents (a flat cost, whatever the corpus size)
SHAPE_SAMPLE = 50


def holds_documents(sources: int, chunks: int) -> bool:
    """Whether ``sources`` holding ``chunks`` level-2 chunks are long documents (nothing yet
    counts as documents: the general choice)."""
    return sources == 0 or chunks / sources >= DOCUMENT_CHUNKS_PER_SOURCE


def corpus_counts(graph: GraphClient, corpus: str | None) -> tuple[int, int]:
    """``(sources, level-2 chunks)`` over a sample of ``corpus``'s sources (every corpus when
    None)."""
    return _counts(graph.read("retrieval/scope_shape_corpus", corpus=corpus, sample=SHAPE_SAMPLE))


def sources_counts(graph: GraphClient, source_ids: list[str]) -> tuple[int, int]:
    """``(sources, level-2 chunks)`` over a sample of the sources ``source_ids`` (a document
    scope)."""
    return _counts(
        graph.read("retrieval/scope_shape_sources", sources=source_ids, sample=SHAPE_SAMPLE)
    )


def _counts(rows: list[Record]) -> tuple[int, int]:
    return (int(rows[0]["sources"]), int(rows[0]["chunks"])) if rows else (0, 0)


def corpus_holds_passages(graph: GraphClient, corpus: str) -> bool:
    """Whether ``corpus`` holds short passages; an empty corpus holds none."""
    sources, chunks = corpus_counts(graph, corpus)
    return sources > 0 and not holds_documents(sources, chunks)
