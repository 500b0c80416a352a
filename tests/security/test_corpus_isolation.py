"""Issue 54 item 3: corpora that cannot see each other. Ingesting corpus B, then dropping it,
leaves every strategy's ranking in corpus A identical, ids and scores, because a query naming a
corpus searches that corpus's own fulltext and vector indexes (graph/corpus_indexes.py): BM25
statistics and nearest neighbours of A's nodes alone. Against the real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_platform.errors import SchemaError
from kg_platform.retrieval.base import get_strategy
from kg_platform.sdk import KnowledgePlatform
from tests.support.data import DEV

pytestmark = pytest.mark.integration

A = "iso-a"
B = "iso-b"
STRATEGIES = ("bm25", "hybrid", "mog", "mogg", "propagate")
K = 8


def _dev(n_questions: int, skip: int = 0) -> tuple[list[str], list[dict]]:
    """The questions ``skip..skip+n`` of HotpotQA's dev set and their candidate paragraphs."""
    lines = (DEV / "hotpotqa.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines[skip : skip + n_questions]]
    paragraphs = {p["doc_id"]: p for r in rows for p in r["paragraphs"]}
    return [r["question"] for r in rows], list(paragraphs.values())


def _write(folder: Path, paragraphs: list[dict], *, suffix: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, p in enumerate(paragraphs):
        text = " ".join(s.strip() for s in p["sentences"])
        (folder / f"p{i:03d}.txt").write_text(f"{p['title']}\n\n{text}{suffix}\n", encoding="utf-8")
    return folder


def _rankings(kp: KnowledgePlatform, questions: list[str]) -> dict:
    out: dict = {}
    for q in questions:
        for name in STRATEGIES:
            items = get_strategy(name, kp.retrieval_context(A)).retrieve(q, K)
            out[(name, q)] = [(it.id, it.score) for it in items]
        out[("default", q)] = [(it.id, it.score) for it in kp.retrieve(q, corpus=A, k=K)]
    return out


def _differences(before: dict, after: dict) -> list[str]:
    return [
        f"{name} / {q[:40]}: {before[(name, q)][:3]} -> {after[(name, q)][:3]}"
        for (name, q) in before
        if before[(name, q)] != after[(name, q)]
    ]


@pytest.fixture()
def two_corpora(clean_graph, settings, embedder, tmp_path):
    """Corpus A (30 HotpotQA dev paragraphs), its rankings, and a function that ingests B."""
    kp = KnowledgePlatform(settings, graph=clean_graph, embedder=embedder)
    questions, paragraphs = _dev(3)
    report = kp.ingest([_write(tmp_path / "a", paragraphs)], corpus=A)
    assert report.status == "completed", report.summary()

    def ingest_b() -> None:
        # B: A's paragraphs again (the same vocabulary, a little longer), and other questions'
        _, others = _dev(4, skip=3)
        folder = _write(tmp_path / "b", paragraphs, suffix=" The answer is in another corpus.")
        _write(folder / "more", others)
        report = kp.ingest([folder], corpus=B)
        assert report.status == "completed", report.summary()

    return kp, questions, ingest_b


def test_a_second_corpus_leaves_the_first_corpus_rankings_identical(two_corpora) -> None:
    kp, questions, ingest_b = two_corpora
    before = _rankings(kp, questions)
    assert all(before[(name, q)] for name in (*STRATEGIES, "default") for q in questions)
    ingest_b()
    assert _differences(before, _rankings(kp, questions)) == []
    kp.drop_corpus(B)
    assert _differences(before, _rankings(kp, questions)) == []


def test_each_corpus_has_its_own_indexes_and_dropping_it_drops_them(two_corpora) -> None:
    from kg_platform.graph.corpus_indexes import INDEX_SUFFIXES, corpus_prefix

    kp, _, ingest_b = two_corpora
    ingest_b()

    def names() -> set[str]:
        return {r["name"] for r in kp.graph.read_raw("SHOW INDEXES YIELD name RETURN name")}

    own = {c: {corpus_prefix(c) + s for s in INDEX_SUFFIXES} for c in (A, B)}
    assert own[A] | own[B] <= names()
    # every node of B's own labels belongs to B; A's level-1 chunks are all in A's index
    rows = kp.graph.read_raw(
        f"MATCH (n:{corpus_prefix(B)}L1) RETURN collect(DISTINCT n.corpus) AS corpora"
    )
    assert rows[0]["corpora"] == [B]
    counts = kp.graph.read_raw(
        f"MATCH (c:L1 {{corpus: $a}}) WITH count(c) AS global_l1 "
        f"MATCH (c:{corpus_prefix(A)}L1) RETURN global_l1, count(c) AS own",
        a=A,
    )
    assert counts[0]["global_l1"] == counts[0]["own"] > 0
    # one index set per node: no index of the shared names exists beside the corpora's
    assert not set(INDEX_SUFFIXES) & names()
    kp.drop_corpus(B)
    assert not (own[B] & names()) and own[A] <= names()


@pytest.mark.parametrize("strategy", ["bm25", "propagate"])
def test_a_search_over_every_corpus_pools_each_corpus_s_own_answers(two_corpora, strategy) -> None:
    """No index spans the corpora, so a search naming none runs in each corpus and pools the
    answers by score: the same items and scores as the per-corpus searches, best first."""
    kp, questions, ingest_b = two_corpora
    ingest_b()
    ctx = kp.retrieval_context(None)
    for q in questions:
        pooled = get_strategy(strategy, ctx).retrieve(q, K)
        each = [
            (it.id, it.score)
            for c in (A, B)
            for it in get_strategy(strategy, kp.retrieval_context(c)).retrieve(q, K)
        ]
        assert [(it.id, it.score) for it in pooled] == sorted(each, key=lambda x: -round(x[1], 12))[
            :K
        ]


def test_kgp_init_gives_a_corpus_written_before_isolation_its_own_indexes(
    clean_graph, settings, embedder, tmp_path
) -> None:
    """A database from before corpora had their own indexes: its corpora are searched through
    the shared indexes (correct, not isolated) until `kgp init` labels their nodes, builds
    their indexes and then drops the shared ones; without either, a search says to run it."""
    from kg_platform.graph.corpus_indexes import (
        INDEX_SUFFIXES,
        UNREAD_SHARED,
        corpus_prefix,
        drop_corpus_indexes,
        has_corpus_indexes,
    )

    kp = KnowledgePlatform(settings, graph=clean_graph, embedder=embedder)
    questions, paragraphs = _dev(1)
    report = kp.ingest([_write(tmp_path / "old", paragraphs)], corpus=A)
    assert report.status == "completed", report.summary()
    own = corpus_prefix(A)
    # as an older version left it: no corpus labels, no corpus indexes
    drop_corpus_indexes(clean_graph, A)
    for suffix in ("L1", "L2", "L3", "L4", "L5", "L6", "Piece", "Section"):
        clean_graph.write_raw("MATCH (n:$($label)) REMOVE n:$($label)", label=own + suffix)
    assert not has_corpus_indexes(clean_graph, A)
    with pytest.raises(SchemaError, match="kgp init"):  # neither its own nor shared indexes
        kp.retrieval_context(A).index_prefix()
    _create_shared_indexes(clean_graph, embedder.dimension)  # what older versions made
    ctx = kp.retrieval_context(A)
    assert ctx.index_prefix() == ""
    shared = get_strategy("bm25", ctx).retrieve(questions[0], K)
    assert shared and all(it.id for it in shared)

    kp.init_schema()
    assert has_corpus_indexes(clean_graph, A)
    left = clean_graph.read_raw(
        "SHOW INDEXES YIELD name WHERE name IN $names RETURN name",
        names=[*INDEX_SUFFIXES, *UNREAD_SHARED],
    )
    assert left == []  # every corpus has its own: the shared ones are dropped
    rows = clean_graph.read_raw(
        "MATCH (n:Chunk {corpus: $a}) RETURN count(n) AS all, "
        "count(CASE WHEN any(x IN labels(n) WHERE x STARTS WITH $own) THEN 1 END) AS own",
        a=A,
        own=own,
    )
    assert rows[0]["all"] == rows[0]["own"] > 0
    ctx = kp.retrieval_context(A)
    assert ctx.index_prefix() == own
    isolated = get_strategy("bm25", ctx).retrieve(questions[0], K)
    assert {it.id for it in isolated} <= {
        r["id"] for r in clean_graph.read_raw("MATCH (c:L2 {corpus: $a}) RETURN c.id AS id", a=A)
    }
    assert len(isolated) == len(shared)
    assert len(INDEX_SUFFIXES) == 19


def _create_shared_indexes(graph, dimension: int) -> None:
    """The indexes over every corpus that versions before one index set per node created (the
    corpus template's statements without a prefix)."""
    from importlib import resources

    from kg_platform.graph.cypher import split_statements

    text = resources.files("kg_platform").joinpath("cypher", "corpus", "indexes.cypher.template")
    rendered = text.read_text("utf-8").replace("{ix}", "").replace("{dimension}", str(dimension))
    unread = [  # and the three nothing read
        "CREATE FULLTEXT INDEX atomic_question_text IF NOT EXISTS FOR (n:AtomicQuestion) "
        "ON EACH [n.text]",
        "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name]",
        "CREATE VECTOR INDEX source_embedding IF NOT EXISTS FOR (n:Source) ON n.embedding "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimension}}}}}",
    ]
    for statement in [*split_statements(rendered), *unread]:
        graph.write_raw(statement)
    graph.write_raw("CALL db.awaitIndexes(120)")
