"""Issue 2 acceptance: a real Neo4j from Maven Central, schema, vector and fulltext indexes."""

from __future__ import annotations

import urllib.request

import numpy as np
import pytest

from kg_platform.errors import GraphError, Neo4jServerError, VectorDimensionMismatch
from tests.support.fixtures import index_corpus
from kg_platform.graph.schema import (
    apply_migrations,
    apply_statement,
    apply_statements,
    check_dimension,
    schema_version,
)

pytestmark = pytest.mark.integration


def test_server_is_neo4j_5_26_community(graph_session):
    version, edition = graph_session.components()
    assert version.startswith("5.26.")
    assert edition == "community"


def test_schema_applied_twice_is_a_noop(graph_session, embedder):
    def snapshot():
        idx = graph_session.read_raw(
            "SHOW INDEXES YIELD name, state RETURN name, state ORDER BY name"
        )
        con = graph_session.read_raw("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")
        mig = graph_session.read_raw(
            "MATCH (m:SchemaMigration) RETURN m.version AS v, "
            "toString(m.applied_at) AS t ORDER BY v"
        )
        return (
            [tuple(r.values()) for r in idx],
            [r["name"] for r in con],
            [tuple(r.values()) for r in mig],
        )

    before = snapshot()
    version = apply_migrations(graph_session, embedder.dimension, embedder.model_name)
    assert snapshot() == before
    assert schema_version(graph_session) == version >= 3
    assert all(state == "ONLINE" for _, state in before[0])


def test_a_schema_rule_another_process_just_created_is_not_an_error(graph_session):
    """Two processes migrating one new database both pass ``IF NOT EXISTS`` and the second
    commit is refused as "equivalent rule exists": the same refusal, provoked here by leaving
    out ``IF NOT EXISTS`` on an index the schema has, must count as applied; a real conflict
    (the name taken by a different rule) must still fail."""
    apply_statement(
        graph_session, "CREATE INDEX piece_term_key FOR (n:PieceTerm) ON (n.corpus, n.term)"
    )
    with pytest.raises(GraphError, match="piece_term_key"):
        apply_statement(graph_session, "CREATE INDEX piece_term_key FOR (n:PieceTerm) ON (n.term)")


def test_schema_statements_in_one_commit_fall_back_one_by_one_after_a_race(graph_session):
    """``apply_statements`` (a corpus's indexes in one commit): when one of its rules was just
    created by another process, the whole commit is refused; the statements then run one at a
    time, the raced one counts as applied and the others are created. A real conflict fails."""
    names = ["t_batch_a", "t_batch_b"]
    for name in names:
        graph_session.write_raw(f"DROP INDEX {name} IF EXISTS")
    raced = "CREATE INDEX piece_term_key FOR (n:PieceTerm) ON (n.corpus, n.term)"
    apply_statements(
        graph_session,
        [f"CREATE INDEX {names[0]} IF NOT EXISTS FOR (n:TBatchA) ON (n.x)", raced]
        + [f"CREATE FULLTEXT INDEX {names[1]} IF NOT EXISTS FOR (n:TBatchB) ON EACH [n.text]"],
    )
    rows = graph_session.read_raw(
        "SHOW INDEXES YIELD name WHERE name IN $names RETURN name ORDER BY name", names=names
    )
    assert [r["name"] for r in rows] == names
    with pytest.raises(GraphError, match="piece_term_key"):
        apply_statements(
            graph_session, ["CREATE INDEX piece_term_key FOR (n:PieceTerm) ON (n.term)"]
        )
    for name in names:
        graph_session.write_raw(f"DROP INDEX {name} IF EXISTS")


def test_vector_index_returns_the_stored_nearest_node(clean_graph, embedder):
    texts = [
        "The duck is a waterbird with a broad flat bill.",
        "Neo4j stores data as nodes and relationships.",
        "Interest rates rose sharply in the second quarter.",
    ]
    vectors = embedder.embed(texts)
    clean_graph.write_raw(
        "UNWIND $rows AS row CREATE (c:Chunk:L1 {id: row.id, text: row.text, level: 1, "
        "corpus: 'foundation'}) "
        "WITH c, row CALL db.create.setNodeVectorProperty(c, 'embedding', row.vec)",
        rows=[
            {"id": f"c{i}", "text": t, "vec": v.tolist()}
            for i, (t, v) in enumerate(zip(texts, vectors))
        ],
    )
    ix = index_corpus(clean_graph, "foundation")
    query = embedder.embed(["Which graph database uses nodes and relationships?"])[0]
    rows = clean_graph.read_raw(
        "CALL db.index.vector.queryNodes($ix + 'chunk_embedding_l1', 3, $q) YIELD node, score "
        "RETURN node.id AS id, score",
        ix=ix,
        q=query.tolist(),
    )
    assert rows[0]["id"] == "c1"
    cos = 2 * rows[0]["score"] - 1  # Neo4j reports (1 + cos) / 2
    assert cos == pytest.approx(
        float(np.dot(query, vectors[1])), abs=5e-3
    )  # index stores float32, quantised


def test_fulltext_index_returns_a_scored_hit(clean_graph):
    clean_graph.write_raw(
        "UNWIND $rows AS row CREATE (:Piece {id: row.id, text: row.text, corpus: 'foundation'})",
        rows=[
            {"id": "p1", "text": "Mallards are dabbling ducks."},
            {"id": "p2", "text": "Graph databases answer path queries."},
        ],
    )
    try:
        rows = clean_graph.read_raw(
            "CALL db.index.fulltext.queryNodes($ix + 'piece_text', $q) YIELD node, score "
            "RETURN node.id AS id, score",
            ix=index_corpus(clean_graph, "foundation"),
            q="dabbling ducks",
        )
        assert [r["id"] for r in rows] == ["p1"]
        assert rows[0]["score"] > 0
    finally:  # pieces in no chunk would count as orphans for the fault tests' whole-db checks
        clean_graph.write_raw("MATCH (p:Piece) WHERE p.id IN ['p1', 'p2'] DETACH DELETE p")


def test_wrong_vector_dimension_raises_our_error(graph_session, embedder):
    index_corpus(graph_session, "foundation")  # a corpus's vector indexes, of the model's size
    check_dimension(graph_session, embedder.dimension)  # the right one passes
    with pytest.raises(VectorDimensionMismatch) as info:
        apply_migrations(graph_session, embedder.dimension + 1)
    assert "kgp init --drop-vector-indexes" in str(info.value)


def test_browser_answers_http_200(neo4j_server):
    if not neo4j_server.get("http_port"):
        pytest.skip("external test server: Browser URL not managed here")
    url = f"http://127.0.0.1:{neo4j_server['http_port']}/browser/"
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert b"<title>Neo4j Browser</title>" in response.read()


def test_status_and_refusal_to_start_twice(neo4j_server):
    server = neo4j_server.get("server")
    if server is None:
        pytest.skip("external test server")
    status = server.status()
    assert status.running and status.bolt_uri == server.bolt_uri()
    assert status.browser_url.endswith("/browser/")
    with pytest.raises(Neo4jServerError, match="already running"):
        server.start()


def test_password_file_is_private(neo4j_server):
    server = neo4j_server.get("server")
    if server is None:
        pytest.skip("external test server")
    assert server.password_file.stat().st_mode & 0o777 == 0o600
