"""``kgp lab bench load``: bounded, loopback-only, and every request is either timed or counted as an
error (the numbers themselves are reported, never asserted)."""

from __future__ import annotations

import pytest

from kg_platform.errors import ConfigError
from kg_platform.ingest import ingest_paths
from kg_platform_lab.bench.load import require_loopback, run_load
from tests.conftest import DOCUMENTS

pytestmark = pytest.mark.faults


def test_only_loopback_servers_are_accepted():
    require_loopback("bolt://127.0.0.1:7687")
    require_loopback("neo4j://localhost:7687")
    with pytest.raises(ConfigError, match="loopback"):
        require_loopback("bolt://8.8.8.8:7687")


@pytest.mark.integration
def test_a_short_load_counts_every_request(graph_session, settings, embedder):
    from kg_platform.sdk.platform import KnowledgePlatform

    ingest_paths(
        graph_session,
        settings,
        [DOCUMENTS / "md" / "pdfplumber-README.md"],
        "t-load",
        embedder=embedder,
    )
    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    with pytest.raises(ConfigError):
        run_load(kp, clients=0, seconds=1)
    with pytest.raises(ConfigError):
        run_load(kp, clients=2, seconds=10_000)
    result = run_load(kp, clients=3, seconds=2, strategy="bm25", corpus="t-load")
    summary = result.summary()
    assert summary["requests"] > 0 and summary["errors"] == {}
    assert summary["p50_ms"] <= summary["p95_ms"] <= summary["p99_ms"]
