"""A four-passage multi-hop graph for the chain rankings' tests (the product's chain-pair stage
and the lab's chain rerank): "Where was the director of Jaws born?" with its first hop (anchor),
its second hop (bridge, linked by a shared entity), a passage that only shares the question's
words (distractor) and one unrelated passage."""

from __future__ import annotations

from typing import Any

from kg_platform.retrieval.base import RetrievalContext

QUESTION = "Where was the director of Jaws born?"
PASSAGES = {
    # id: (source title, text)
    "anchor": (
        "Jaws (film)",
        "Jaws is a 1975 American thriller film directed by Steven Spielberg.",
    ),
    "distractor": (
        "Jeannot Szwarc",
        "Jeannot Szwarc, the director of a 1978 sequel, was born in Paris.",
    ),
    "bridge": ("Steven Spielberg", "Spielberg grew up in Cincinnati, Ohio, and later in Arizona."),
    "other": ("Sharks", "Sharks are a group of fish with a skeleton of cartilage."),
}


def chain_context(
    graph: Any, settings: Any, embedder: Any, corpus: str, *, references: bool = False
) -> RetrievalContext:
    """Write the passages (one source and one level-1 chunk each) and their entities into
    ``corpus``, with a ``REFERENCES`` edge from the anchor's source to the bridge's when
    ``references``; the context reads them with the walk's degree cap at 2."""
    graph.write_raw(
        """
        UNWIND $rows AS row
        CREATE (:Source {id: 's-' + row.id, title: row.title, corpus: $corpus})
        CREATE (:Chunk {id: row.id, corpus: $corpus, level: 1, text: row.text, tokens: 20,
                        source_id: 's-' + row.id})
        WITH count(*) AS made
        MATCH (a:Chunk {id: 'anchor'}), (b:Chunk {id: 'bridge'}), (o:Chunk {id: 'other'}),
              (d:Chunk {id: 'distractor'})
        CREATE (s:Entity {id: 'e1', key: 'steven spielberg', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (s)-[:MENTIONED_IN]->(b)
        CREATE (:Entity {id: 'e2', key: 'ohio', corpus: $corpus})-[:MENTIONED_IN]->(b)
        CREATE (h:Entity {id: 'e3', key: 'film', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (h)-[:MENTIONED_IN]->(d)
        CREATE (h)-[:MENTIONED_IN]->(o)
        """,
        rows=[{"id": k, "title": t, "text": x} for k, (t, x) in PASSAGES.items()],
        corpus=corpus,
    )
    if references:
        graph.write_raw(
            "MATCH (sa:Source {id: 's-anchor'}), (sb:Source {id: 's-bridge'}) "
            "CREATE (sa)-[:REFERENCES {mentions: 1}]->(sb)"
        )
    from tests.support.fixtures import index_corpus

    index_corpus(graph, corpus)  # hand-written nodes: the corpus's own labels and indexes
    return RetrievalContext(
        graph, embedder, settings.with_tuning(entity_graph={"max_degree": 2}), corpus=corpus
    )
