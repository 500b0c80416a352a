"""The chain-pair score on a real graph (real Neo4j, the bundled model, the shipped weights): the
links it reads (titles, bridging entities, REFERENCES), and the late rerank with and without
``rerank.chain_pair``."""

from __future__ import annotations

import pytest

from kg_platform.retrieval.base import RetrievedItem
from kg_platform.retrieval.rerank.chain_pair import read_links
from kg_platform.retrieval.rerank.selection import late_rerank

from tests.support.chain_graph import PASSAGES, QUESTION, chain_context

pytestmark = pytest.mark.integration

CORPUS = "chain-pair-test"


@pytest.fixture()
def ctx(clean_graph, settings, embedder):
    return chain_context(clean_graph, settings, embedder, CORPUS, references=True)


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
