"""``kgp neo4j dump`` / ``load`` round trip on the suite's spare server: dump, wipe, load, and
the node and edge counts and a retrieval result are the same as before the wipe. The spare, not
the session's server: a dump and a load each stop and start the server, which would leave the
session's cold (its query plans gone) for every test after this one."""

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


def test_dump_wipe_load_restores_the_graph(spare_neo4j, embedder, tmp_path):
    from kg_platform.config import Settings
    from kg_platform.graph import GraphClient
    from kg_platform.graph.schema import apply_migrations
    from kg_platform.neo4j_server.backup import dump_database, load_database
    from kg_platform.sdk.platform import KnowledgePlatform

    server = spare_neo4j
    settings = Settings(
        neo4j={"uri": server.bolt_uri(), "password": server.password()},
        data_dir=tmp_path / "kgp-data",
        distill={"nlp_on_ingest": False},
    )
    corpus = "t-backup"
    question = "How does pdfplumber extract tables?"
    with GraphClient.from_settings(settings) as graph:
        apply_migrations(graph, embedder.dimension, embedder.model_name)
        report = ingest_paths(
            graph, settings, [DOCUMENTS / "md" / "pdfplumber-README.md"], corpus, embedder=embedder
        )
        assert report.status == "completed"
        kp = KnowledgePlatform(settings, graph=graph, embedder=embedder)
        before_items = [
            (i.id, round(i.score, 5))
            for i in kp.retrieve(question, strategy="hybrid", corpus=corpus, k=5)
        ]
        before = _counts(graph)
        assert before_items and before[0] > 0

        dump = dump_database(server, tmp_path / "backups" / "kg.dump")
        assert dump.stat().st_size > 0 and stat.S_IMODE(os.stat(dump).st_mode) == 0o600
        _wipe(graph)
        graph.write_raw("MATCH (n:SchemaMigration) DETACH DELETE n")
        assert _counts(graph)[0] < before[0]
        load_database(server, dump)
        graph.forget_bookmarks()  # the restore rewound the transaction ids

        assert _counts(graph) == before
        after_items = [
            (i.id, round(i.score, 5))
            for i in kp.retrieve(question, strategy="hybrid", corpus=corpus, k=5)
        ]
        assert after_items == before_items
