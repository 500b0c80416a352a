"""The chain rerank on a real graph (real Neo4j, the bundled model): the links it reads, and a
second hop the first one names lifted over a passage that only shares the question's words."""

from __future__ import annotations

import pytest

import numpy as np

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem
from kg_platform.retrieval.rerank.selection import late_rerank
from kg_platform_lab.rerank.chain_rerank import chain_rerank_scores, parse_weights, read_candidates

pytestmark = pytest.mark.integration

CORPUS = "chain-test"
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


def test_links_are_the_titles_and_the_bridging_entities(ctx):
    ids = list(PASSAGES)
    got = {c.id: c for c in read_candidates(ids, [PASSAGES[i][1] for i in ids], ctx)}
    assert got["anchor"].title == "Jaws (film)"
    # 'ohio' links nothing (one chunk), 'film' is a hub above max_degree 2
    assert got["bridge"].entities == ("steven spielberg",)
    assert got["anchor"].entities == ("steven spielberg",)
    assert got["other"].entities == ()


def _ranked(ctx, weights: dict | None) -> list[str]:
    """The late rerank's order, then (with ``weights``) the chain rerank's over its scores."""
    # no level-2 chunks here: the shape reads as documents, whose structure rerank is turned off
    # and the product's chain-pair stage is off: this compares the lab's chain rerank with the
    # late rerank alone (tests/integration/test_chain_pair_graph.py covers the product's stage)
    rerank = ctx.settings.rerank.model_copy(update={"structure": "off"})
    ctx.settings = ctx.settings.model_copy(update={"rerank": rerank}).with_tuning(
        rerank={"chain_pair": False}
    )
    items = [
        RetrievedItem(id=i, text=PASSAGES[i][1], score=1.0 - n / 10)
        for n, i in enumerate(["distractor", "other", "anchor", "bridge"])
    ]
    ranked = late_rerank(QUESTION, items, ctx, "hybrid")
    if weights is None:
        return [it.id for it in ranked]
    ids = [it.id for it in ranked]
    late = np.asarray([it.score for it in ranked], dtype=np.float64)
    scores = chain_rerank_scores(
        QUESTION, ids, [it.text for it in ranked], late, ctx, parse_weights(weights)
    )
    order = sorted(range(len(ids)), key=lambda i: (-round(float(scores[i]), 9), i))
    return [ids[i] for i in order]


def test_the_second_hop_the_first_names_is_lifted(ctx):
    plain = _ranked(ctx, None)
    assert plain.index("bridge") > plain.index("distractor")  # it shares no word with the question
    chained = _ranked(ctx, {"title": 2.0, "anchors": 2})
    assert chained[0] == "bridge"
    assert chained.index("anchor") < chained.index("other")
    by_entity = _ranked(ctx, {"entity": 2.0, "anchors": 2})
    assert by_entity[0] == "bridge"
    assert _ranked(ctx, {"anchors": 2}) == plain  # no weight: the late rerank's order
