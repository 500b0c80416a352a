"""QA paragraphs as a pooled corpus: gold supporting facts map to pieces (acceptance tests)."""

from __future__ import annotations

import pytest

from kg_platform_lab.qa_ingest import gold_pieces_many, ingest_qa, read_questions
from kg_platform.ingest.writer import drop_corpus
from tests.support.data import DEV

pytestmark = pytest.mark.integration


def _dev_file(name: str):

    return DEV / name


def test_hotpot_slice_every_supporting_fact_maps_to_exactly_one_piece(
    graph_session, settings, embedder
):
    corpus = "t-ingest-qa-hotpot"
    drop_corpus(graph_session, corpus)
    path = _dev_file("hotpotqa.jsonl")
    report = ingest_qa(graph_session, settings, path, corpus, limit=3, embedder=embedder)
    assert report.status == "completed", report.summary()
    questions = list(read_questions(path, 3))
    distinct = {p["doc_id"] for q in questions for p in q["paragraphs"]}
    assert len(report.added) == len(distinct)
    mapping = gold_pieces_many(graph_session, corpus, questions)
    for q, facts in zip(questions, mapping):
        assert len(facts) == len(q["supporting_facts"]) > 0
        for (title, idx), pieces in zip(q["supporting_facts"], facts):
            assert len(pieces) == 1, (title, idx)
            [pid] = pieces
            row = graph_session.read_raw(
                "MATCH (p:Piece {id: $id}) RETURN p.text AS t, p.sentences AS s", id=pid
            )[0]
            para = next(p for p in q["paragraphs"] if p["title"] == title)
            assert idx in row["s"] and para["sentences"][idx].strip() in row["t"]
    # sources are the paragraphs: uri and title as documented
    row = graph_session.read_raw(
        "MATCH (:Corpus {name: $c})-[:HAS_SOURCE]->(s) RETURN s.uri AS u, s.title AS t LIMIT 1",
        c=corpus,
    )[0]
    assert row["u"].startswith("qa://hotpotqa/hotpotqa:")
    again = ingest_qa(graph_session, settings, path, corpus, limit=3, embedder=embedder)
    assert len(again.skipped) == len(distinct) and not again.added
    assert again.counts.get("similar_edges") == report.counts.get("similar_edges")


def test_musique_fact_maps_to_the_pieces_of_its_paragraph(graph_session, settings, embedder):
    corpus = "t-ingest-qa-musique"
    drop_corpus(graph_session, corpus)
    path = _dev_file("musique.jsonl")
    report = ingest_qa(graph_session, settings, path, corpus, limit=1, embedder=embedder)
    assert report.status == "completed"
    [q] = list(read_questions(path, 1))
    [facts] = gold_pieces_many(graph_session, corpus, [q])
    for (title, _), pieces in zip(q["supporting_facts"], facts):
        assert pieces
        texts = [
            r["t"]
            for r in graph_session.read_raw(
                "MATCH (p:Piece) WHERE p.id IN $ids RETURN p.text AS t ORDER BY p.doc_ord",
                ids=sorted(pieces),
            )
        ]
        gold = [p for p in q["paragraphs"] if p["title"] == title and p["is_supporting"]]
        assert " ".join(texts).split() == " ".join(gold[0]["sentences"]).split() or len(gold) > 1
