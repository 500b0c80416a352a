"""The late-interaction rerank reads each candidate under its section path (real Neo4j, the
bundled model): two identical paragraphs in different sections tie on their text alone, and the
heading that matches the question decides between them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem
from kg_platform.retrieval.rerank.late_interaction import reading_texts
from kg_platform.retrieval.rerank.selection import apply_selection
from kg_platform.sdk import KnowledgePlatform

pytestmark = pytest.mark.integration

CORPUS = "late-context"
SHARED = "The figures below were collected over three weeks on the same cluster."
PAPER = f"""# A Study of Sentiment Classifiers

## Hardware Setup

{SHARED}

## Baselines We Compare Against

{SHARED}

## Results

Our classifier reaches 91.2 accuracy on the test split.
"""


@pytest.fixture(scope="module")
def platform(graph_session, settings, embedder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("late-context")
    (folder / "sentiment-study.md").write_text(PAPER, encoding="utf-8")
    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = kp.ingest([folder], corpus=CORPUS)
    assert report.status == "completed", report.summary()
    return kp


def _plain(kp):
    """The platform's settings with the section context off."""
    return kp.settings.with_tuning(rerank={"section_context": False})


def _shared_chunks(kp) -> list[dict]:
    """The two level-1 chunks holding the shared sentence, 'Hardware Setup' first, with one
    of their pieces."""
    rows = kp.graph.read_raw(
        "MATCH (sec:Section)-[:HAS_CHUNK]->(c:Chunk {corpus: $corpus, level: 1}) "
        "WHERE c.text = $text "
        "MATCH (p:Piece)-[:IN]->(c) "
        "WITH sec, c, head(collect(p.id)) AS piece "
        "RETURN c.id AS id, c.text AS text, sec.title AS section, piece ORDER BY section DESC",
        corpus=CORPUS,
        text=SHARED,
    )
    assert [r["section"] for r in rows] == ["Hardware Setup", "Baselines We Compare Against"]
    return [dict(r) for r in rows]


def test_reading_texts_put_the_section_path_before_chunks_and_pieces(platform, embedder):
    kp = platform
    chunks = _shared_chunks(kp)
    ctx = RetrievalContext(kp.graph, embedder, kp.settings, corpus=CORPUS)
    ids = [chunks[0]["id"], chunks[1]["piece"], "no-such-node"]
    texts = reading_texts(ids, [SHARED, SHARED, "loose text"], ctx)
    # the document's title, shared by both, is left out: it cannot tell them apart
    assert texts == [
        f"Hardware Setup\n{SHARED}",
        f"Baselines We Compare Against\n{SHARED}",  # a piece: its chunk's section
        "loose text",  # nothing in the graph: read as it is
    ]
    alone = reading_texts(ids[:1], [SHARED], ctx)  # one candidate: its whole path
    assert alone == [f"A Study of Sentiment Classifiers > Hardware Setup\n{SHARED}"]
    assert reading_texts(ids, [SHARED, SHARED, "x"], replace(ctx, settings=_plain(kp))) == [
        SHARED,
        SHARED,
        "x",
    ]


def test_the_matching_heading_lifts_its_paragraph(platform, embedder):
    kp = platform
    chunks = _shared_chunks(kp)
    ctx = RetrievalContext(kp.graph, embedder, kp.settings, corpus=CORPUS)
    items = [RetrievedItem(id=c["id"], text=c["text"], score=1.0) for c in chunks]
    question = "Which baselines do they compare against?"
    out = apply_selection("late", question, items, ctx)
    assert [it.id for it in out] == [chunks[1]["id"], chunks[0]["id"]]
    assert out[0].text == SHARED  # the returned text is the paragraph, not the path
    # the same two items read without their paths are one text: a tie, kept in retrieval order
    plain = apply_selection("late", question, items, replace(ctx, settings=_plain(kp)))
    assert [it.id for it in plain] == [chunks[0]["id"], chunks[1]["id"]]
