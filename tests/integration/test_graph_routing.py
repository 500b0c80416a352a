"""GraphClient against the local server through the routing scheme (``neo4j://``, what clusters
and Aura use): reads run in read transactions, writes in write transactions, and the database
name given to the client is the one every statement runs against."""

from __future__ import annotations

import pytest

from kg_platform.errors import GraphError
from kg_platform.graph import GraphClient

pytestmark = pytest.mark.integration


def _routing_uri(bolt_uri: str) -> str:
    assert bolt_uri.startswith("bolt://"), bolt_uri
    return "neo4j://" + bolt_uri[len("bolt://") :]


@pytest.fixture()
def routed(neo4j_server, graph_session):
    with GraphClient(
        _routing_uri(neo4j_server["uri"]), ("neo4j", neo4j_server["password"])
    ) as graph:
        yield graph


def test_routing_scheme_reads_and_writes(routed):
    routed.write_raw("MERGE (n:RoutingProbe {id: $id}) SET n.v = $v", id="r1", v=7)
    try:
        # the write's bookmark is kept for the client's next sessions (causal reads on a cluster)
        assert routed._bookmarks.get_bookmarks()
        assert [
            r["v"]
            for r in routed.read_raw("MATCH (n:RoutingProbe {id: $id}) RETURN n.v AS v", id="r1")
        ] == [7]
        # a read goes through a READ transaction: the server refuses a write in it, which is
        # what lets routing send every read to a secondary
        with pytest.raises(GraphError):
            routed.read_raw("CREATE (:RoutingProbe {id: $id})", id="r2")
        assert (
            routed.read_raw("MATCH (n:RoutingProbe {id: $id}) RETURN count(n) AS n", id="r2")[0][
                "n"
            ]
            == 0
        )
    finally:
        routed.write_raw("MATCH (n:RoutingProbe) DELETE n")


def test_routing_scheme_runs_the_piece_graph_sync(routed, settings):
    from kg_platform.ingest.similar import sync_piece_graph

    corpus = "t-routing-sync"
    texts = [
        "zebrafish quokka marmalade river",
        "zebrafish quokka marmalade lake",
        "quokka marmalade zebrafish sea",
        "unrelated words entirely here",
    ]
    routed.write_raw(
        "UNWIND range(0, size($texts) - 1) AS i "
        "CREATE (:Piece {id: $corpus + '-' + toString(i), corpus: $corpus, "
        "text: $texts[i]})",
        texts=texts,
        corpus=corpus,
    )
    routed.write("ingest/mark_corpus_dirty", corpus=corpus)
    try:
        pg = settings.tuning.piece_graph
        result = sync_piece_graph(routed, corpus, pg.k_graph, pg.t_graph)
        assert not result.skipped and result.edges >= 3
        stored = routed.read_raw(
            "MATCH (:Piece {corpus: $c})-[r:SIMILAR]->() RETURN count(r) AS n", c=corpus
        )[0]["n"]
        assert stored == result.edges
        assert result.mode == "full"  # the first sync of a corpus freezes its statistics
        frozen = routed.read_raw(
            "MATCH (st:PieceGraphStats {corpus: $c}) RETURN st.ready AS ready, st.n AS n", c=corpus
        )
        assert [dict(r) for r in frozen] == [{"ready": True, "n": 4}]
    finally:
        routed.write_raw("MATCH (p:Piece {corpus: $c}) DETACH DELETE p", c=corpus)
        routed.write("ingest/delete_corpus_meta", corpus=corpus)  # with its piece-graph stats


def test_the_database_name_is_honoured(neo4j_server, graph_session):
    auth = ("neo4j", neo4j_server["password"])
    with GraphClient(_routing_uri(neo4j_server["uri"]), auth, database="system") as system:
        names = {r["name"] for r in system.read_raw("SHOW DATABASES YIELD name RETURN name")}
    assert "neo4j" in names
    with GraphClient(_routing_uri(neo4j_server["uri"]), auth, database="nosuchdb") as missing:
        with pytest.raises(GraphError, match="nosuchdb|not found|does not exist"):
            missing.read_raw("RETURN 1 AS one")
