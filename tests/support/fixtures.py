"""The suite's shared fixtures and hooks (loaded by the repository's root ``conftest.py``, so
that ``tests/`` and the lab's ``lab/tests/`` share them): one real Neo4j 5.26 server per test
session, started by the project's own ``LocalNeo4j`` (ephemeral home, free ports) and stopped at
the end. No database mocks.

Without the shared bench data (``../shared``, or ``KGP_SHARED_DIR``), the unit tier
(``tests/unit/``, ``make test-unit``) still runs: its tests that read the data skip themselves
with a reason; every other test is skipped with the reason below.

Set ``KGP_TEST_NEO4J_URI`` (+ ``KGP_TEST_NEO4J_PASSWORD``) to run against an existing server
instead; its database is WIPED by the ``clean_graph`` fixture, so never point it at real data.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.support.data import BENCH, DEV, DOCUMENTS, REPO, SHARED  # noqa: F401 (re-exported)


UNIT_TIER = REPO / "tests" / "unit"


def in_unit_tier(item: pytest.Item) -> bool:
    """Whether ``item`` is a test of the unit tier (no Neo4j, no Java, no shared data)."""
    return UNIT_TIER in item.path.parents


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not DOCUMENTS.is_dir():
        # One reason on every test beyond the unit tier, instead of dozens of missing-file
        # failures: they ingest the bench documents or read the dev sets.
        no_data = pytest.mark.skip(
            reason=f"needs the shared bench data, not at {SHARED} (no {DOCUMENTS}): run the "
            "tests from a clone next to shared/, or set KGP_SHARED_DIR to the folder that holds "
            "bench/ (`make test-unit` runs without it)"
        )
        for item in items:
            if not in_unit_tier(item):
                item.add_marker(no_data)
    if os.environ.get("KGP_RUN_LOCAL_LLM"):
        return
    skip = pytest.mark.skip(reason="needs the local llama.cpp server: set KGP_RUN_LOCAL_LLM=1")
    for item in items:
        if "local_llm" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _driver_log_level_kept() -> Iterator[None]:
    """``kgp``'s ``main()`` quiets the Neo4j driver's logger for its whole process; a test that
    runs it in-process must not hide the driver's retry warnings from the tests that follow it
    in the same worker (they count them)."""
    driver_log = logging.getLogger("neo4j")
    level = driver_log.level
    yield
    driver_log.setLevel(level)


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Connection info of a real Neo4j server for this session."""
    uri = os.environ.get("KGP_TEST_NEO4J_URI")
    if uri:
        yield {"uri": uri, "password": os.environ["KGP_TEST_NEO4J_PASSWORD"], "home": None}
        return
    from kg_platform.config import Settings
    from kg_platform.neo4j_server import LocalNeo4j

    settings = Settings(neo4j={"heap": "1g", "pagecache": "256m"})
    server = LocalNeo4j(settings, ephemeral=True, home=tmp_path_factory.mktemp("neo4j-home"))
    server.start()
    try:
        yield {
            "uri": server.bolt_uri(),
            "password": server.password(),
            "home": server.home,
            "http_port": server.http_port,
            "server": server,
        }
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spare_neo4j_server(neo4j_server: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A second local Neo4j for the tests that kill, stop or restart a server (the session's
    serves every other test). Started on first use and shared by those tests, instead of a
    fresh server each: a fresh home costs two JVM starts (the initial password, then the
    server), a restart one. Not ephemeral: a stopped or killed server keeps its home (data and
    password), so a test can start it again. Use it through ``spare_neo4j``."""
    if neo4j_server.get("server") is None:
        pytest.skip("needs locally started servers (KGP_TEST_NEO4J_URI is set)")
    from kg_platform._process import free_port
    from kg_platform.config import Settings
    from kg_platform.neo4j_server import LocalNeo4j

    server = LocalNeo4j(
        Settings(neo4j={"heap": "512m", "pagecache": "128m"}),
        home=tmp_path_factory.mktemp("spare-neo4j-home"),
        bolt_port=free_port(),
        http_port=free_port(),
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def spare_neo4j(spare_neo4j_server) -> Iterator:
    """The spare server (``spare_neo4j_server``), running and with no data (schema kept): this
    test may kill, stop and start it. Started again here if an earlier test left it down."""
    from kg_platform.graph import GraphClient

    server = spare_neo4j_server
    if not server.status().running:
        server.start()
    with GraphClient(server.bolt_uri(), ("neo4j", server.password())) as graph:
        _wipe(graph)
    yield server


@pytest.fixture(scope="session")
def product_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The product's wheel (``python -m build --wheel``), built once per test run for the tests
    that read or install it. The build writes under the repository (``build/``), so the workers
    of a parallel run take turns under a file lock and share the one wheel."""
    import fcntl
    import subprocess
    import sys

    pytest.importorskip("build")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # pytest-xdist: one folder for all the workers of this run
    out_dir = shared / "product-wheel"
    with open(shared / "product-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheels = sorted(out_dir.glob("kg_platform-*.whl"))
        if not wheels:
            built = subprocess.run(
                [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out_dir],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
            wheels = sorted(out_dir.glob("kg_platform-*.whl"))
    (wheel,) = wheels
    return wheel


@pytest.fixture(scope="session")
def settings(neo4j_server: dict, tmp_path_factory: pytest.TempPathFactory):
    """Settings that point at the session's test server, with the NLP distilled layer off at
    ingestion. Its default (``auto``: built over short passages) would put a spaCy child
    process into every test that ingests a few passages; the tests of the layer ask for it
    (``tests/support/passages.with_nlp_layer``), and ``test_nlp_layer`` tests the default."""
    from kg_platform.config import Settings

    return Settings(
        neo4j={"uri": neo4j_server["uri"], "password": neo4j_server["password"]},
        data_dir=tmp_path_factory.mktemp("kgp-data"),
        distill={"nlp_on_ingest": False},
    )


@pytest.fixture(scope="session")
def embedder():
    from kg_platform.embedding import get_embedder
    from kg_platform.config import EmbeddingSettings

    return get_embedder(EmbeddingSettings())


@pytest.fixture(scope="session")
def graph_session(settings, embedder) -> Iterator:
    from kg_platform.graph import GraphClient
    from kg_platform.graph.schema import apply_migrations

    with GraphClient.from_settings(settings) as graph:
        apply_migrations(graph, embedder.dimension, embedder.model_name)
        yield graph


@pytest.fixture()
def cli_env(monkeypatch, settings, graph_session):
    """Point the CLI's ``get_settings()`` (read from the environment) at the session's test
    server for one test; yields the session's graph."""
    from kg_platform.config import get_settings

    monkeypatch.setenv("NEO4J_URI", settings.neo4j.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j.password.get_secret_value())
    monkeypatch.setenv("KGP_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("KGP_DISTILL__NLP_ON_INGEST", "false")  # as the ``settings`` fixture
    get_settings.cache_clear()
    yield graph_session
    get_settings.cache_clear()


@pytest.fixture()
def clean_graph(graph_session):
    """The session's graph with every data node removed (schema and migrations kept)."""
    _wipe(graph_session)
    return graph_session


def _wipe(graph) -> None:
    # CALL {} IN TRANSACTIONS needs an implicit transaction, so use a plain session run.
    with graph.driver.session(database=graph.database) as session:
        session.run(
            "MATCH (n) WHERE NOT n:SchemaMigration AND NOT n:SchemaInfo "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
        ).consume()


def index_corpus(graph, corpus: str) -> str:
    """What `kgp init` does for a corpus a test wrote by hand (raw Cypher, shared labels only):
    label its nodes for its own indexes, build them, wait until they answer; return its prefix
    (what a query puts before an index name: ``prefix + "chunk_text_l1"``)."""
    from kg_platform.graph.corpus_indexes import (
        corpus_prefix,
        ensure_corpus_indexes,
        label_corpus_nodes,
    )

    prefix = corpus_prefix(corpus)
    label_corpus_nodes(graph, corpus, prefix)
    ensure_corpus_indexes(graph, corpus, backfill=False)
    graph.write_raw("CALL db.awaitIndexes(60)")
    return prefix
