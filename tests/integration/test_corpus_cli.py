"""``KnowledgePlatform.corpora`` / ``drop_corpus`` and ``kgp corpus list|drop`` on a real Neo4j.

The SDK's counts are checked against counts taken another way (walking the graph from the
Corpus node); a drop must leave no node carrying the corpus name, keep the other corpus whole,
and refuse an unknown name with the hint that points at ``kgp corpus list``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

A = "t-corpus-cli-a"
B = "t-corpus-cli-b"
UNKNOWN = "t-corpus-cli-no-such"

DOCS_A = {
    "platypus.md": "# Platypus\n\nThe platypus lays eggs. It lives in eastern Australia.\n\n"
    "## Diet\n\nIt hunts shrimp and insect larvae at the bottom of rivers.\n",
    "duck.txt": "Ducks are waterbirds with broad flat bills. Many ducks dabble for food at the "
    "surface. Others dive to find snails and water plants.\n",
}
DOCS_B = {"neo4j.md": "# Neo4j\n\nNeo4j stores data as nodes and relationships.\n"}


def _platform(settings, graph, embedder):
    from kg_platform.sdk.platform import KnowledgePlatform

    return KnowledgePlatform(settings, graph=graph, embedder=embedder)


def _forget(graph, *names: str) -> None:
    from kg_platform.ingest.writer import drop_corpus

    for name in names:  # unlinked sources and routers included
        drop_corpus(graph, name)


def _register_router(graph, corpus: str, tmp_path) -> None:
    graph.write(
        "retrieval/mog_router_register",
        id=f"{corpus}:mog:1",
        corpus=corpus,
        kind="mog",
        version="1",
        path=str(tmp_path / "routers" / corpus),
        metrics="{}",
        n_levels=3,
    )


def _walked_counts(graph, corpus: str) -> dict[str, int]:
    """Counts reached from the Corpus node through the structure (no corpus-property lookup)."""
    row = graph.read_raw(
        "MATCH (:Corpus {name: $c})-[:HAS_SOURCE]->(s:Source) "
        "OPTIONAL MATCH (s)-[:HAS_SECTION*1..]->(sec:Section) "
        "OPTIONAL MATCH (sec)-[:HAS_CHUNK]->(ch:Chunk) "
        "OPTIONAL MATCH (p:Piece)-[:IN]->(ch) "
        "RETURN count(DISTINCT s) AS sources, count(DISTINCT sec) AS sections, "
        "count(DISTINCT ch) AS chunks, count(DISTINCT p) AS pieces",
        c=corpus,
    )[0]
    return {k: int(row[k]) for k in ("sources", "sections", "chunks", "pieces")}


def _nodes_of(graph, corpus: str) -> dict[str, int]:
    """Every node still carrying the corpus name, by label (a full scan: test graphs are small)."""
    rows = graph.read_raw(
        "MATCH (n) WHERE n.corpus = $c OR (n:Corpus AND n.name = $c) "
        "UNWIND labels(n) AS label RETURN label, count(*) AS n",
        c=corpus,
    )
    return {r["label"]: int(r["n"]) for r in rows}


@pytest.fixture()
def two_corpora(cli_env, settings, embedder, tmp_path):
    """Corpus A (two files, a trained router) and corpus B (one file, a router), fresh."""
    graph = cli_env
    _forget(graph, A, B, UNKNOWN)
    for corpus, docs in ((A, DOCS_A), (B, DOCS_B)):
        folder = tmp_path / corpus
        folder.mkdir()
        for name, text in docs.items():
            (folder / name).write_text(text, encoding="utf-8")
        report = _platform(settings, graph, embedder).ingest([folder], corpus)
        assert len(report.added) == len(docs) and not report.errors, report.summary()
        _register_router(graph, corpus, tmp_path)
    yield graph
    _forget(graph, A, B)


def _cli(*args: str, input: str | None = None):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    return CliRunner().invoke(app, list(args), input=input)


def test_corpora_counts_match_the_graph(two_corpora, settings, embedder):
    kp = _platform(settings, two_corpora, embedder)
    infos = {i.name: i for i in kp.corpora()}
    assert {A, B} <= set(infos)
    for corpus, n_files in ((A, 2), (B, 1)):
        info = infos[corpus]
        walked = _walked_counts(two_corpora, corpus)
        assert walked["sources"] == n_files
        assert all(v > 0 for v in walked.values()), walked
        assert info.to_dict() == {"name": corpus, **walked}
    assert infos[A].pieces > infos[B].pieces  # A's two files hold more sentences
    # a chosen few: only the existing ones, with the same counts
    assert kp.corpora([B, UNKNOWN, A]) == [infos[A], infos[B]]
    assert kp.corpora([UNKNOWN]) == []


def test_corpus_counts_are_index_seeks(two_corpora):
    from kg_platform.graph.cypher import cypher

    with two_corpora.driver.session(database=two_corpora.database) as session:
        plan = session.run("EXPLAIN " + cypher("corpus/counts"), names=[A]).consume().plan
    ops: list[str] = []

    def walk(node) -> None:
        ops.append(node["operatorType"].split("@")[0])
        for child in node.get("children", []):
            walk(child)

    walk(plan)
    assert sum(op.startswith("NodeIndexSeek") for op in ops) >= 4, ops
    assert not [op for op in ops if "LabelScan" in op or op.startswith("AllNodesScan")], ops


def test_kgp_corpus_list_json_and_table(two_corpora, settings, embedder):
    expected = {i.name: i.to_dict() for i in _platform(settings, two_corpora, embedder).corpora()}
    res = _cli("corpus", "list", "--json")
    assert res.exit_code == 0, res.output + repr(res.exception)
    listed = {row["name"]: row for row in json.loads(res.output)}
    assert listed[A] == expected[A] and listed[B] == expected[B]

    res = _cli("corpus", "list")
    assert res.exit_code == 0, res.output + repr(res.exception)
    lines = res.output.splitlines()
    assert lines[0].split() == ["name", "sources", "sections", "chunks", "pieces"]
    row_a = next(line.split() for line in lines if line.startswith(A + " "))
    a = expected[A]
    assert row_a == [A, *(str(a[k]) for k in ("sources", "sections", "chunks", "pieces"))]


def test_kgp_corpus_drop_deletes_the_corpus_and_nothing_else(two_corpora, settings, embedder):
    graph = two_corpora
    kp = _platform(settings, graph, embedder)
    before_b = kp.corpora([B])
    nodes_b = _nodes_of(graph, B)
    assert {"Source", "Section", "Chunk", "Piece", "Router", "Corpus"} <= set(_nodes_of(graph, A))

    # without --yes it asks; answering no deletes nothing
    res = _cli("corpus", "drop", A, input="n\n")
    assert res.exit_code != 0 and "Drop corpus" in res.output, res.output
    assert kp.corpora([A])[0].sources == 2

    info_a = kp.corpora([A])[0]
    res = _cli("corpus", "drop", A, "--yes")
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert f"dropped corpus {A!r}: 2 sources, {info_a.sections} sections" in res.output
    assert _nodes_of(graph, A) == {}
    assert kp.corpora([A]) == [] and A not in {i.name for i in kp.corpora()}
    from kg_platform.retrieval.strategies.router import load_router

    assert load_router(graph, A, "mog") is None  # a corpus re-ingested as A starts afresh

    # the other corpus is whole, its router too
    assert kp.corpora([B]) == before_b
    assert _nodes_of(graph, B) == nodes_b and nodes_b["Router"] == 1

    # answering yes works too
    res = _cli("corpus", "drop", B, input="y\n")
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert _nodes_of(graph, B) == {}


def test_drop_reaches_sources_whose_corpus_node_is_gone(two_corpora, settings, embedder):
    graph = two_corpora
    kp = _platform(settings, graph, embedder)
    graph.write_raw("MATCH (co:Corpus {name: $c}) DETACH DELETE co", c=A)
    info = kp.corpora([A])
    assert [(i.name, i.sources) for i in info] == [(A, 2)]  # still listed, from its sources
    assert kp.drop_corpus(A) == 2
    assert _nodes_of(graph, A) == {}
    assert kp.corpora([B])[0].sources == 1


def test_drop_refuses_while_the_corpus_is_being_ingested(two_corpora, settings, embedder):
    from kg_platform.errors import JobLocked
    from kg_platform.graph.lock import JobLock
    from kg_platform.ingest.session import ingest_lock_name

    graph = two_corpora
    kp = _platform(settings, graph, embedder)
    with JobLock(graph, ingest_lock_name(A), lease_s=30):
        with pytest.raises(JobLocked) as err:
            kp.drop_corpus(A)
    assert "not dropped" in str(err.value)
    assert kp.corpora([A])[0].sources == 2 and _nodes_of(graph, A)["Router"] == 1


def test_dropping_an_unknown_corpus_fails_with_the_hint(cli_env, settings, embedder):
    from kg_platform.errors import CorpusNotFound

    _forget(cli_env, UNKNOWN)
    with pytest.raises(CorpusNotFound) as err:
        _platform(settings, cli_env, embedder).drop_corpus(UNKNOWN)
    assert "kgp corpus list" in err.value.hint

    # through the real entry point: kgp's error handler, exit code 2, no traceback
    out = subprocess.run(
        [sys.executable, "-m", "kg_platform.cli.main", "corpus", "drop", UNKNOWN, "--yes"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"there is no corpus {UNKNOWN!r}" in out.stderr
    assert "hint: `kgp corpus list`" in out.stderr
    assert "Traceback" not in out.stderr
