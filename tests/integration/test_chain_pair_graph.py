"""The chain-pair score on a real graph (real Neo4j, the bundled model, the shipped weights): the
links it reads (titles, bridging entities, REFERENCES), and the late rerank with and without
``rerank.chain_pair``."""

from __future__ import annotations

import pytest

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem
from kg_platform.retrieval.rerank.chain_pair import read_links
from kg_platform.retrieval.rerank.selection import late_rerank

pytestmark = pytest.mark.integration

CORPUS = "chain-pair-test"
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


@pytest.fixture()
def ctx(clean_graph, settings, embedder):
    clean_graph.write_raw(
        """
        UNWIND $rows AS row
        CREATE (:Source {id: 's-' + row.id, title: row.title, corpus: $corpus})
        CREATE (:Chunk {id: row.id, corpus: $corpus, level: 1, text: row.text, tokens: 20,
                        source_id: 's-' + row.id})
        WITH count(*) AS made
        MATCH (a:Chunk {id: 'anchor'}), (b:Chunk {id: 'bridge'}), (o:Chunk {id: 'other'}),
              (d:Chunk {id: 'distractor'})
        MATCH (sa:Source {id: 's-anchor'}), (sb:Source {id: 's-bridge'})
        CREATE (sa)-[:REFERENCES {mentions: 1}]->(sb)
        CREATE (s:Entity {id: 'e1', key: 'steven spielberg', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (s)-[:MENTIONED_IN]->(b)
        CREATE (:Entity {id: 'e2', key: 'ohio', corpus: $corpus})-[:MENTIONED_IN]->(b)
        CREATE (h:Entity {id: 'e3', key: 'film', corpus: $corpus})-[:MENTIONED_IN]->(a)
        CREATE (h)-[:MENTIONED_IN]->(d)
        CREATE (h)-[:MENTIONED_IN]->(o)
        """,
        rows=[{"id": k, "title": t, "text": x} for k, (t, x) in PASSAGES.items()],
        corpus=CORPUS,
    )
    return RetrievalContext(
        clean_graph, embedder, settings.with_tuning(entity_graph={"max_degree": 2}), corpus=CORPUS
    )


def test_links_are_titles_bridging_entities_and_references(ctx):
    got = read_links(list(PASSAGES), ctx)
    assert got["anchor"]["title"] == "Jaws (film)"
    assert got["anchor"]["source"] == "s-anchor"
    # REFERENCES is read in both directions
    assert got["anchor"]["refs"] == ["s-bridge"] and got["bridge"]["refs"] == ["s-anchor"]
    assert got["other"]["refs"] == []
    # 'ohio' links nothing (one chunk), 'film' is a hub above max_degree 2
    assert got["bridge"]["entities"] == ["steven spielberg"]
    assert got["other"]["entities"] == []


def _ranked(ctx, chain_pair: bool) -> list[RetrievedItem]:
    # no level-2 chunks here: the shape reads as documents, whose structure rerank is turned off
    rerank = ctx.settings.rerank.model_copy(update={"structure": "off"})
    ctx.settings = ctx.settings.model_copy(update={"rerank": rerank}).with_tuning(
        rerank={"chain_pair": chain_pair}
    )
    items = [
        RetrievedItem(id=i, text=PASSAGES[i][1], score=1.0 - n / 10)
        for n, i in enumerate(["distractor", "other", "anchor", "bridge"])
    ]
    return late_rerank(QUESTION, items, ctx, "hybrid")


def test_the_linked_second_hop_is_lifted_by_the_chain_pair_score(ctx):
    plain = [it.id for it in _ranked(ctx, False)]
    assert plain.index("bridge") > plain.index("distractor")  # few words shared with the question
    ranked = _ranked(ctx, True)
    chained = [it.id for it in ranked]
    assert sorted(chained) == sorted(plain)
    assert chained.index("bridge") < plain.index("bridge")
    probs = [it.breakdown["evidence_probability"] for it in ranked]
    assert probs == sorted(probs, reverse=True) and all(0 < p < 1 for p in probs)
