"""``kgp neo4j dump`` / ``load`` round trip on the suite's own server: dump, wipe, load, and the
node and edge counts and a retrieval result are the same as before the wipe."""

from __future__ import annotations

import os
import stat

import pytest

from kg_platform.ingest import ingest_paths
from tests.conftest import DOCUMENTS, _wipe

pytestmark = [pytest.mark.faults, pytest.mark.integration]


def _counts(graph) -> tuple[int, int]:
    nodes = graph.read_raw("MATCH (n) RETURN count(n) AS n")[0]["n"]
    edges = graph.read_raw("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    return nodes, edges


def test_dump_wipe_load_restores_the_graph(
    neo4j_server, graph_session, settings, embedder, tmp_path
):
    if neo4j_server.get("server") is None:
        pytest.skip("needs the suite's local server (KGP_TEST_NEO4J_URI is set)")
    from kg_platform.neo4j_server import LocalNeo4j
    from kg_platform.neo4j_server.backup import dump_database, load_database
    from kg_platform.sdk.platform import KnowledgePlatform

    owned = neo4j_server["server"]
    # the same server, seen as a persistent one so stopping it keeps its home
    server = LocalNeo4j(
        owned.settings, home=owned.home, bolt_port=owned.bolt_port, http_port=owned.http_port
    )
    corpus = "t-backup"
    report = ingest_paths(
        graph_session,
        settings,
        [DOCUMENTS / "md" / "pdfplumber-README.md"],
        corpus,
        embedder=embedder,
    )
    assert report.status == "completed"
    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    question = "How does pdfplumber extract tables?"
    before_items = [
        (i.id, round(i.score, 5))
        for i in kp.retrieve(question, strategy="hybrid", corpus=corpus, k=5)
    ]
    before = _counts(graph_session)
    assert before_items and before[0] > 0

    dump = dump_database(server, tmp_path / "backups" / "kg.dump")
    assert dump.stat().st_size > 0 and stat.S_IMODE(os.stat(dump).st_mode) == 0o600
    _wipe(graph_session)
    graph_session.write_raw("MATCH (n:SchemaMigration) DETACH DELETE n")
    assert _counts(graph_session)[0] < before[0]
    load_database(server, dump)
    graph_session.forget_bookmarks()  # the restore rewound the transaction ids

    assert _counts(graph_session) == before
    after_items = [
        (i.id, round(i.score, 5))
        for i in kp.retrieve(question, strategy="hybrid", corpus=corpus, k=5)
    ]
    assert after_items == before_items
