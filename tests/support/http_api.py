"""The HTTP API tests' shared checks: a problem+json answer with every documented field and no
internals, a background run polled until it ends, and an API client over a real uvicorn server.

One copy for ``tests/security/`` and ``tests/integration/``, holding the strictest check any of
the earlier copies made (the RFC 9457 fields of ``docs/serving.md``, the ``X-Request-Id`` the
body repeats, no stack trace, no Neo4j or Java text)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.support.serving import uvicorn_thread

#: every field ``docs/serving.md`` ("Errors") documents for a problem answer
PROBLEM_FIELDS = frozenset({"type", "title", "status", "detail", "instance", "request_id", "hint"})
#: what never leaves the server: a Python stack trace, Neo4j's or Java's own text, a Bolt address
INTERNALS = (
    "Traceback",
    'File "',
    "java.",
    "Exception",
    "OutOfMemory",
    "Neo.ClientError",
    "Neo.DatabaseError",
    "bolt://",
)
#: the states of a run that has not ended
RUNNING = ("queued", "running")


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Assert ``response`` is a ``status`` problem+json answer with every documented field and
    no internals; return its body."""
    assert response.status_code == status, response.text[:2000]
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert PROBLEM_FIELDS <= set(body), (status, sorted(PROBLEM_FIELDS - set(body)), body)
    assert body["status"] == status and body["type"].startswith("urn:kg-platform:problem:"), body
    assert body["title"] and body["detail"] and body["hint"], body
    assert body["request_id"] == response.headers["x-request-id"], body
    leaked = [marker for marker in INTERNALS if marker in response.text]
    assert not leaked, (leaked, response.text[:2000])
    return body


def wait_run(
    client: httpx.Client, ref: str, headers: dict[str, str], timeout: float = 300
) -> dict[str, Any]:
    """Poll ``/v1/runs/{ref}`` (a run id or an ingest's task id) until the run has ended;
    return its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        answer = client.get(f"/v1/runs/{ref}", headers=headers)
        assert answer.status_code == 200, answer.text[:2000]
        run = answer.json()
        if run["status"] not in RUNNING:
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.3)


@contextmanager
def api_client(
    settings: Any, embedder: Any, key: str, timeout: float = 120
) -> Iterator[httpx.Client]:
    """An ``httpx.Client`` on a real uvicorn server of the API over its own platform object (its
    own driver), as ``kgp serve`` runs it, for the key ``key``."""
    from kg_platform.sdk import KnowledgePlatform
    from kg_platform.serve.app import build_app

    app = build_app(KnowledgePlatform(settings, embedder=embedder), key=key)
    with uvicorn_thread(app) as base, httpx.Client(base_url=base, timeout=timeout) as client:
        yield client
