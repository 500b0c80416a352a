"""The ``entity`` walk's arithmetic on a graph small enough to follow by hand (real Neo4j).

Why it matters: a chunk shares its mass among the entities it mentions, and only the ones that
lead somewhere (mentioned in 2..max_degree chunks) should get a share. An entity no other chunk
mentions can only hand the mass back, and a hub passes nothing on: counting them starved the
second hop of a multi-hop question."""

from __future__ import annotations

import pytest
from tests.support.fixtures import index_corpus

pytestmark = pytest.mark.integration

CORPUS = "walk-test"


def test_a_chunk_passes_its_mass_only_to_entities_that_lead_to_another_chunk(
    clean_graph, settings, embedder
):
    from kg_platform.retrieval.base import RetrievalContext
    from kg_platform.retrieval.strategies.entity import EntityStrategy

    # seed -> A; A names the bridge B, five entities nobody else names, and a hub H;
    # B -> C is the second hop. H is mentioned in four chunks, above max_degree 3.
    clean_graph.write_raw(
        """
        UNWIND ['a', 'c', 'x', 'y', 'z'] AS cid
        CREATE (:Chunk {id: cid, corpus: $corpus, level: 1, text: cid, tokens: 1})
        WITH count(*) AS made
        MATCH (a:Chunk {id: 'a'}), (c:Chunk {id: 'c'})
        CREATE (s:Entity {id: 'seed', name: 'seed', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (b:Entity {id: 'bridge', name: 'bridge', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (b)-[:MENTIONED_IN]->(c)
        WITH a
        UNWIND range(1, 5) AS i
        CREATE (:Entity {id: 'once' + i, name: 'once' + i, corpus: $corpus})-[:MENTIONED_IN]->(a)
        WITH DISTINCT a
        CREATE (h:Entity {id: 'hub', name: 'hub', corpus: $corpus})-[:MENTIONED_IN]->(a)
        WITH h
        MATCH (o:Chunk) WHERE o.id IN ['x', 'y', 'z']
        CREATE (h)-[:MENTIONED_IN]->(o)
        """,
        corpus=CORPUS,
    )
    index_corpus(clean_graph, CORPUS)  # hand-written nodes: the corpus's own labels and indexes
    walk = {"chunk_seeds": 0, "chunk_weight": 0.0, "damping": 1.0, "max_degree": 3}
    ctx = RetrievalContext(
        clean_graph, embedder, settings.with_tuning(entity_graph=walk), corpus=CORPUS
    )
    qv = [float(x) for x in embedder.embed(["anything"])[0]]
    items = {it.id: it for it in EntityStrategy(ctx).run(qv, [{"id": "seed", "w": 1.0}], 10)}
    # t1: all the mass on A; t2: all of it on the bridge (not 1/7 of it); t3: half to C
    assert items["a"].breakdown["ppr_t1"] == pytest.approx(1.0)
    assert items["c"].breakdown["ppr_t3"] == pytest.approx(0.5)
    assert items["c"].breakdown["entity:bridge"] == pytest.approx(1.0)
    assert not {"x", "y", "z"} & set(items)  # the hub passes nothing on
