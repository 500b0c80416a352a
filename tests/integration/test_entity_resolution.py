"""Entity resolution in a corpus that had no entity when the run began searches the run's own new
entities in memory instead of the vector index; it must resolve every name as the index would,
embedding merges and their guards included. Real Neo4j, real embedder."""

from __future__ import annotations

import pytest

from kg_platform.distilling.common import PendingChunk
from kg_platform.distilling.entities import EntityResolver, Mention, write_chunk_facts

pytestmark = pytest.mark.integration

BATCHES = [
    [
        Mention("warsaw", "Warsaw", "place", ""),
        Mention("marie curie", "Marie Curie", "person", ""),
        Mention("world war ii", "World War II", "event", ""),
    ],
    [
        Mention("warsaw poland", "Warsaw, Poland", "place", ""),  # merges with warsaw (cos 0.94)
        Mention("world war i", "World War I", "event", ""),  # close, but never the same war
        Mention("paris", "Paris", "place", ""),
        Mention("marie curie", "Marie Curie", "person", ""),  # an exact key
    ],
]


class _Recording:
    """The graph client, recording which named queries ran."""

    def __init__(self, graph) -> None:
        self._graph, self.names = graph, []

    def read(self, name, **params):
        self.names.append(name)
        return self._graph.read(name, **params)

    def __getattr__(self, attr):
        return getattr(self._graph, attr)


def _resolve_corpus(graph, embedder, corpus: str, remember: int) -> tuple[dict, list[str]]:
    """Write the two batches into ``corpus``; per mention key, the key of its entity."""
    recording = _Recording(graph)
    resolver = EntityResolver(recording, embedder, corpus, 0.9, remember=remember)
    for b, mentions in enumerate(BATCHES):
        row = PendingChunk(f"{corpus}-c{b}", "text", f"{corpus}-s{b}", 1, "", "")
        graph.write_raw(
            "CREATE (:Chunk {id: $id, corpus: $c, level: 1, source_id: $s})",
            id=row.id,
            c=corpus,
            s=row.source_id,
        )
        write_chunk_facts(recording, resolver, corpus, [(row, mentions, [])], version="t", by="t")
    rows = graph.read_raw(
        "MATCH (e:Entity {corpus: $c})-[:MENTIONED_IN]->(ch:Chunk) "
        "RETURN ch.id AS chunk, e.key AS entity, e.name AS name, e.aliases AS aliases",
        c=corpus,
    )
    resolved = {}
    for r in rows:
        for surface in [r["name"], *r["aliases"]]:
            resolved[(r["chunk"][len(corpus) :], surface)] = r["entity"]
    return resolved, recording.names


def test_a_new_corpus_resolves_names_in_memory_exactly_as_the_vector_index_does(
    clean_graph, embedder
):
    in_memory, memory_queries = _resolve_corpus(clean_graph, embedder, "res-memory", 200_000)
    # remember=0: after the first batch the resolver asks the vector index, as in a corpus
    # that already had entities
    indexed, index_queries = _resolve_corpus(clean_graph, embedder, "res-index", 0)
    assert "distill/entity_neighbours" not in memory_queries
    assert "distill/entity_neighbours" in index_queries
    assert in_memory == indexed
    assert in_memory[("-c1", "Warsaw, Poland")] == "warsaw"  # an embedding merge, both ways
    assert in_memory[("-c1", "World War I")] == "world war i"  # the number guard held
