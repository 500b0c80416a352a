"""The chain rerank on a real graph (real Neo4j, the bundled model): the links it reads, and a
second hop the first one names lifted over a passage that only shares the question's words."""

from __future__ import annotations

import pytest

import numpy as np

from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.selection import late_rerank
from kg_platform_lab.rerank.chain_rerank import chain_rerank_scores, parse_weights, read_candidates

from tests.support.chain_graph import PASSAGES, QUESTION, chain_context

pytestmark = pytest.mark.integration

CORPUS = "chain-test"


@pytest.fixture()
def ctx(clean_graph, settings, embedder):
    return chain_context(clean_graph, settings, embedder, CORPUS, references=False)


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
