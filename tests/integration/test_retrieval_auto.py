"""``auto``, the default strategy: ``hybrid`` over long documents, ``mogg`` over pools of
short passages, decided by the scope's level-2 chunks per source, against the real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_platform.retrieval import auto
from kg_platform.retrieval.base import get_strategy
from kg_platform.sdk import KnowledgePlatform

pytestmark = pytest.mark.integration

DOCS = "auto-docs"
PASSAGES = "auto-passages"
SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"
QUESTION = "What file formats can MarkItDown convert to Markdown?"


def test_choose_reads_chunks_per_source():
    assert auto.choose(sources=1, chunks=30) == "hybrid"  # one paper
    assert auto.choose(sources=800, chunks=820) == "mogg"  # a pool of paragraphs
    assert auto.choose(sources=2, chunks=8) == "hybrid"  # the threshold itself
    assert auto.choose(sources=0, chunks=0) == "hybrid"  # nothing yet: the general choice


@pytest.fixture(scope="module")
def kp(graph_session, settings, embedder, tmp_path_factory):
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLES], corpus=DOCS)
    assert report.status == "completed", report.summary()
    folder = tmp_path_factory.mktemp("passages")
    for i, line in enumerate(
        [
            "MarkItDown converts PowerPoint, Word and Excel files to Markdown.",
            "IBM is headquartered in Armonk, New York.",
            "Ducks feed on plants, insects and small fish.",
            "The Penn Treebank is a corpus of parsed English sentences.",
        ]
    ):
        (folder / f"p{i}.txt").write_text(line + "\n", encoding="utf-8")
    report = platform.ingest([folder], corpus=PASSAGES)
    assert report.status == "completed", report.summary()
    return platform


def test_auto_is_hybrid_over_documents_and_mogg_over_passages(kp) -> None:
    for corpus, expected in ((DOCS, "hybrid"), (PASSAGES, "mogg")):
        ctx = kp.retrieval_context(corpus)
        strategy = get_strategy("auto", ctx)
        items = strategy.retrieve(QUESTION, 5)
        assert strategy.chosen == expected
        direct = get_strategy(expected, kp.retrieval_context(corpus)).retrieve(QUESTION, 5)
        assert [it.id for it in items] == [it.id for it in direct]
        assert [it.score for it in items] == [it.score for it in direct]


def test_a_document_scope_inside_a_passage_sized_corpus_is_judged_on_its_own(kp) -> None:
    """The choice is per scope: one long document scoped out of the samples is a document."""
    ctx = kp.retrieval_context(DOCS, scope=["MarkItDown"])
    strategy = get_strategy("auto", ctx)
    items = strategy.retrieve(QUESTION, 3)
    assert strategy.chosen == "hybrid" and items
    assert {it.source_id for it in items} == set(ctx.sources or [])


def test_the_default_path_is_auto_with_the_late_rerank(kp) -> None:
    """What a user gets with no flags: ``auto`` + the late rerank, through the one pipeline."""
    assert kp.settings.retrieve.strategy == "auto" and kp.settings.retrieve.select == "auto"
    res = kp.search(QUESTION, corpus=DOCS, k=3)
    assert res.strategy == "auto" and res.select == "late"
    assert all("late_maxsim" in it.breakdown for it in res.items)
    assert any("PowerPoint" in it.text for it in res.items)
    assert json.dumps([it.to_dict() for it in res.items])  # serialisable as the API returns it


def test_when_the_chosen_strategy_finds_nothing_hybrid_answers(kp, monkeypatch) -> None:
    ctx = kp.retrieval_context(PASSAGES)
    strategy = get_strategy("auto", ctx)
    mogg = get_strategy("mogg", ctx)
    monkeypatch.setattr(mogg, "retrieve", lambda query, k: [])
    strategy._runners["mogg"] = mogg  # a mogg that finds nothing, as on a graph without pieces
    items = strategy.retrieve(QUESTION, 3)
    assert strategy.chosen == "hybrid" and items
    direct = get_strategy("hybrid", kp.retrieval_context(PASSAGES)).retrieve(QUESTION, 3)
    assert [it.id for it in items] == [it.id for it in direct]
