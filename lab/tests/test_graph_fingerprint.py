"""`kgp lab graph-fingerprint` on a real graph: two ingestions of the same files under one name
give the same fingerprint, and one changed property or one extra edge is named by its label or
type."""

from __future__ import annotations

import shutil

import pytest

from kg_platform.ingest import ingest_paths
from kg_platform.ingest.writer import drop_corpus
from kg_platform_lab.evaluation.fingerprint import differences, fingerprint
from tests.support.data import DOCUMENTS

pytestmark = pytest.mark.integration

CORPUS = "t-fingerprint"
FILES = ["md/pdfplumber-README.md", "html/wikipedia-duck.html"]


def _ingest(graph, settings, embedder, folder):
    drop_corpus(graph, CORPUS)
    report = ingest_paths(graph, settings, folder, CORPUS, embedder=embedder)
    assert report.status == "completed", report.errors


def test_same_files_same_fingerprint_and_a_change_is_named(
    graph_session, settings, embedder, tmp_path
) -> None:
    files = []
    for rel in FILES:
        target = tmp_path / rel.split("/")[-1]
        shutil.copy(DOCUMENTS / rel, target)
        files.append(target)
    _ingest(graph_session, settings, embedder, files)
    first = fingerprint(graph_session, CORPUS)
    # the corpus's own index labels are written with their key masked: Chunk:L1:ck*_L1
    (level_one_key,) = [k for k in first.nodes if k.startswith("Chunk:L1")]
    assert "ck*_L1" in level_one_key
    assert first.nodes[level_one_key]["count"] > 10
    assert first.relationships["SIMILAR"]["count"] > 0

    _ingest(graph_session, settings, embedder, list(reversed(files)))
    second = fingerprint(graph_session, CORPUS)
    assert differences(first, second) == []
    assert first.digest == second.digest

    graph_session.write_raw(
        "MATCH (c:Chunk {corpus: $corpus, level: 1}) WITH c ORDER BY c.id LIMIT 1 "
        "SET c.text = c.text + ' changed'",
        corpus=CORPUS,
    )
    changed = fingerprint(graph_session, CORPUS)
    level_one = first.nodes[level_one_key]["count"]
    assert differences(first, changed) == [
        f"nodes {level_one_key}: same count {level_one}, different content"
    ]

    graph_session.write_raw(
        "MATCH (a:Chunk {corpus: $corpus, level: 1}) WITH a ORDER BY a.id LIMIT 2 "
        "WITH collect(a) AS two MATCH (x) WHERE x = two[0] MATCH (y) WHERE y = two[1] "
        "CREATE (x)-[:NEXT]->(y)",
        corpus=CORPUS,
    )
    assert "relationships NEXT: count" in " ".join(
        differences(changed, fingerprint(graph_session, CORPUS))
    )
    drop_corpus(graph_session, CORPUS)
