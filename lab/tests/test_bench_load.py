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


def test_the_kill_summary_splits_the_answers_at_the_kill_and_at_ready():
    from kg_platform_lab.bench.load_http import Answer, kill_summary

    answers = [
        Answer(0.0, 0.1, 200, "server"),
        Answer(0.5, 1.2, 503, "server"),  # in flight at the kill (1.0), answered while down
        Answer(1.3, 1.4, 503, "graph"),
        Answer(9.0, 10.5, 503, "graph"),  # answered after ready (10.0): recovery
        Answer(10.1, 10.3, 200, "server"),
        Answer(10.2, 10.9, 200, "graph"),
    ]
    s = kill_summary(answers, began=0.0, killed=1.0, ready=10.0, clients=2)
    assert s["before_kill"]["requests"] == 1
    down = s["while_down"]
    assert down["requests"] == 2 and down["statuses"] == {"503": 2}
    assert down["max_ms"] == 700.0 and down["first_503_after_kill_s"] == 0.2
    assert down["sent_after_kill"]["requests"] == 1 and down["sent_after_kill"]["max_ms"] == 100.0
    assert s["after_ready"]["statuses"] == {"503": 1, "200": 2}
    assert s["recovery"] == {
        "server_key_first_200_after_ready_s": 0.3,
        "graph_key_first_200_after_ready_s": 0.9,
    }
    assert s["other_statuses"] == []
    assert kill_summary(
        answers + [Answer(11, 11.1, 0, "server")], began=0, killed=1, ready=10, clients=2
    )["other_statuses"] == [0]


def test_the_kill_run_refuses_what_it_cannot_do():
    from kg_platform_lab.bench.load_http import run_kill_load

    with pytest.raises(ConfigError, match="kill-neo4j-after"):
        run_kill_load(clients=2, seconds=10, kill_after=20)


def test_a_server_that_exits_at_start_is_reported_with_its_own_words(tmp_path):
    """The bench keeps ``kgp serve``'s log in a file (a pipe nobody reads would block a server
    that logs much) and shows its end when the server exits before it is ready."""
    import os

    from kg_platform_lab.bench.load_http import started_server

    env = dict(os.environ) | {"KGP_API_KEY": "short", "KGP_DATA_DIR": str(tmp_path)}
    with pytest.raises(ConfigError, match="exited with") as failed:
        with started_server(env):
            pytest.fail("a server with a 5-character key must not start")
    assert "32 characters" in str(failed.value)
