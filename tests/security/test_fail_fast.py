"""Issue 54 item 7, fail fast: while Neo4j is gone (``kill -9`` of its server), the HTTP API's
interactive endpoints and the MCP tools answer 503 problem+json at once, with ``Retry-After``,
instead of after the driver's retry budget (13-16 s measured before); requests caught in flight
by the kill are answered 503 as soon as the server notices; once Neo4j is back the next
requests succeed, without a restart of the API.

Bounds: the issue asks for a 503 within 1 s and success within 2 s of Neo4j being ready; the
test asserts 1.5 s and 3 s, so a loaded 2-core machine does not make it flaky, and both stay far
below the 13-16 s of the old behaviour (these are product behaviour bounds, not benchmarks).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from kg_platform._process import pid_alive
from kg_platform.config import ServeSettings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app
from tests.support.serving import uvicorn_thread

pytestmark = [pytest.mark.faults, pytest.mark.integration]

KEY = "test-key-fail-fast-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
CORPUS = "fail-fast"
SAMPLE = Path(__file__).resolve().parents[2] / "ingestion" / "samples" / "markitdown-README.md"
DOWN_S = 1.5  # issue: 1 s
BACK_S = 3.0  # issue: 2 s

CALLS = [
    ("POST", "/v1/search", {"query": "file formats", "corpus": CORPUS, "k": 3}),
    ("POST", "/v1/explain", {"query": "file formats", "corpus": CORPUS, "k": 2}),
    ("POST", "/v1/ask", {"question": "Which formats?", "corpus": CORPUS}),
    ("GET", "/v1/corpora", None),
    ("GET", "/v1/sources/markitdown-README.md", None),
    ("GET", "/v1/runs", None),
]


@pytest.fixture()
def own_neo4j(spare_neo4j, tmp_path):
    """The suite's spare Neo4j (the session's is shared): killed and started again."""
    from kg_platform.config import Settings

    server = spare_neo4j
    settings = Settings(
        neo4j={"uri": server.bolt_uri(), "password": server.password()},
        data_dir=tmp_path / "kgp-data",
        distill={"nlp_on_ingest": False},
        serve=ServeSettings(rate_per_s=500, rate_burst=2000),
    )
    return server, settings


def _kill(server) -> None:
    pid = server.status().pid
    assert pid
    os.kill(pid, signal.SIGKILL)  # this test's own server, by its pid
    while pid_alive(pid):
        time.sleep(0.05)


def _call(client: httpx.Client, method: str, path: str, body) -> httpx.Response:
    params = {"corpus": CORPUS} if path.startswith("/v1/sources") else None
    return client.request(method, path, json=body, params=params, headers=AUTH)


def _assert_unavailable(response: httpx.Response, took: float) -> None:
    assert response.status_code == 503, response.text[:1000]
    assert took < DOWN_S, f"{response.request.url.path} took {took:.2f} s to answer 503"
    assert response.headers["content-type"].startswith("application/problem+json")
    assert int(response.headers["retry-after"]) >= 1
    body = response.json()
    assert {"type", "title", "status", "detail", "instance", "request_id", "hint"} <= set(body)
    assert "unavailable" in body["detail"] and body["request_id"]
    assert "bolt://" not in response.text and "127.0.0.1" not in response.text


def test_requests_fail_fast_while_neo4j_is_dead_and_succeed_once_it_is_back(
    own_neo4j, embedder
) -> None:
    from mcp.client import Client

    from kg_platform.serve.mcp_server import build_mcp
    from kg_platform.serve.principal import LOCAL, McpPrincipal
    from kg_platform.serve.service import Service

    server, settings = own_neo4j
    with KnowledgePlatform(settings, embedder=embedder) as sdk:
        report = sdk.ingest([SAMPLE], corpus=CORPUS)
        assert report.status == "completed", report.summary()

    api_platform = KnowledgePlatform(settings, embedder=embedder)
    app = build_app(api_platform, key=KEY)
    mcp_service = Service(KnowledgePlatform(settings, embedder=embedder))
    mcp = build_mcp(mcp_service)
    mcp.middleware.insert(0, McpPrincipal(local=LOCAL))  # as over stdio: the local client

    async def tool(name: str, args: dict) -> tuple[bool, str, float]:
        async with Client(mcp) as client:
            started = time.monotonic()
            result = await client.call_tool(name, args)
            took = time.monotonic() - started
        return result.is_error, " ".join(getattr(c, "text", "") for c in result.content), took

    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=120) as client:
        for method, path, body in CALLS:
            assert _call(client, method, path, body).status_code == 200, path
        error, _, _ = asyncio.run(tool("search", {"query": "formats", "corpus": CORPUS}))
        assert not error

        # a steady load while Neo4j dies: the requests caught in flight answer too
        stop = threading.Event()
        timings: list[tuple[float, float, int]] = []  # (start, seconds, status)

        def load() -> None:
            with httpx.Client(base_url=base, timeout=120) as own:
                while not stop.is_set():
                    started = time.monotonic()
                    status = _call(own, *CALLS[0]).status_code
                    timings.append((started, time.monotonic() - started, status))
                    time.sleep(0.02)

        loaders = [threading.Thread(target=load, daemon=True) for _ in range(2)]
        for thread in loaders:
            thread.start()
        time.sleep(0.5)
        killed = time.monotonic()
        _kill(server)
        time.sleep(2.0)

        for method, path, body in CALLS:
            started = time.monotonic()
            response = _call(client, method, path, body)
            _assert_unavailable(response, time.monotonic() - started)
        health = client.get("/v1/health")
        assert health.status_code == 503 and health.json()["status"] == "degraded"
        assert "bolt://" not in health.text

        # the MCP tools fail fast as well (the MCP server's own Service notices by itself)
        asyncio.run(tool("list_corpora", {}))  # the first call may be the one that notices
        for name, args in [
            ("search", {"query": "formats", "corpus": CORPUS}),
            ("list_corpora", {}),
            ("get_source", {"source": "markitdown-README.md", "corpus": CORPUS}),
        ]:
            error, text, took = asyncio.run(tool(name, args))
            assert error and "unavailable" in text and took < DOWN_S, (name, text, took)
            assert "bolt://" not in text and "request id" in text

        stop.set()
        for thread in loaders:
            thread.join(timeout=120)
        server.start()
        ready = time.monotonic()
        while _call(client, *CALLS[0]).status_code != 200:
            assert time.monotonic() - ready < BACK_S, "the API did not recover in time"
            time.sleep(0.05)
        for method, path, body in CALLS:  # every endpoint, not only the first
            response = _call(client, method, path, body)
            assert response.status_code == 200, (path, response.text[:500])
        error, text, _ = asyncio.run(tool("search", {"query": "formats", "corpus": CORPUS}))
        deadline = time.monotonic() + BACK_S
        while error and time.monotonic() < deadline:
            time.sleep(0.1)
            error, text, _ = asyncio.run(tool("search", {"query": "formats", "corpus": CORPUS}))
        assert not error, text
    mcp_service.close()

    # the load's requests that met the dead server: in flight at the kill, or sent after it
    met = [(s, t, code) for s, t, code in timings if s + t > killed]
    codes = {code for _, _, code in met}
    assert 503 in codes and codes <= {200, 503}, met[:20]  # 200: done just before the kill
    slow = [(round(s - killed, 2), round(t, 2)) for s, t, _ in met if t > BACK_S]
    # each answered within 3 s, those in flight at the kill included (13-16 s before); the
    # issue's own 1 s bound is asserted above on the requests made once the server noticed
    assert not slow, slow
