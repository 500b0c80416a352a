"""Issue 54 item 8: nothing internal in an answer. No HTTP problem, MCP tool error or LangChain
exception carries a host, a PID, a server path, a Bolt address, Cypher or Java/Neo4j text; each
carries a request id instead, and the server logs the full detail under that id.

Real errors where they can be had cheaply: the database's own (``RETURN 1/0`` on the session's
Neo4j answers ``Neo.ClientError.Statement.ArithmeticError``), a server that is not there (a
closed port), and the platform's exceptions as their code raises them."""

from __future__ import annotations

import asyncio
import logging
import re
import socket

import pytest
from fastapi.testclient import TestClient

from kg_platform import errors
from kg_platform.config import Settings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app
from kg_platform.serve.problems import problem_for

KEY = "test-key-no-internals-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
INTERNAL = re.compile(
    r"java\.|Neo\.\w+Error|bolt://|neo4j://|127\.0\.0\.1|/tmp/|/home/|/root/|"
    r"RETURN 1/0|MATCH \(|Traceback|File \"|\b" + re.escape(socket.gethostname()) + r":\d+"
)


def _clean(text: str) -> None:
    found = INTERNAL.search(text)
    assert found is None, f"internal text {found.group(0)!r} in: {text}"


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _neo4j_error(graph) -> errors.GraphError:
    with pytest.raises(errors.GraphError) as info:
        graph.read_raw("RETURN 1/0")
    assert "Neo.ClientError" in str(info.value)  # the real text, which must not leave
    return info.value


def test_problems_keep_the_platforms_messages_and_hide_the_rest(caplog) -> None:
    caplog.set_level(logging.INFO, logger="kg_platform.serve.problems")
    cases = [
        errors.JobLocked(
            f"job 'ingest:x' is already running (lock held by {socket.gethostname()}:4242:0badc0de)"
        ),
        errors.LLMError("LLM endpoint http://10.1.2.3:8000/v1 failed after 3 attempts: boom"),
        errors.EmbeddingError("could not load embedding model from /root/models/x: bad file"),
        errors.GraphError("Neo4j at bolt://127.0.0.1:7687 is unavailable: refused"),
        errors.Neo4jServerError("Neo4j is already running from /home/u/neo4j (pid 77)"),
        errors.RetrievalError("Neo.ClientError.Statement.SyntaxError: MATCH (n) RETURN n"),
        errors.ConfigError("no kgp.toml at /home/u/project/kgp.toml"),
        RuntimeError("a bug at /tmp/x.py line 3"),
    ]
    for exc in cases:
        problem = problem_for(exc)
        body = problem.encoded(instance="/v1/x").decode()
        _clean(body)
        rid = problem.body()["request_id"]
        logged = [r.getMessage() for r in caplog.records if rid in r.getMessage()]
        assert logged, f"nothing logged under {problem.request_id} for {exc!r}"
    assert "kgp.toml" in problem_for(cases[6]).detail  # the file name stays, not its folder
    kept = problem_for(errors.CorpusNotFound("there is no corpus 'sampels'", hint="list them"))
    assert kept.status == 404 and kept.detail == "there is no corpus 'sampels'"
    assert kept.hint == "list them"
    assert problem_for(cases[0]).status == 409 and problem_for(cases[3]).status == 503


def test_a_database_error_answers_generically_over_mcp_and_langchain(
    graph_session, settings, embedder, caplog
) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from kg_platform.integrations.langchain import KGPlatformRetriever
    from kg_platform.serve.problems import public_error
    from kg_platform.serve.mcp_server import _tool
    from kg_platform.serve.service import Service

    caplog.set_level(logging.WARNING, logger="kg_platform.serve.problems")
    real = _neo4j_error(graph_session)
    public = public_error(real)
    _clean(public.message())
    assert "request id" in public.message() and "graph database failed" in public.detail
    assert any(
        public.request_id in r.getMessage() and "ArithmeticError" in r.getMessage()
        for r in caplog.records
    ), "the database's own text is logged under the request id"

    service = Service(KnowledgePlatform(settings, graph=graph_session, embedder=embedder))
    try:

        async def tool() -> str:
            with pytest.raises(ToolError) as info:
                await _tool(service.call(graph_session.read_raw, "RETURN 1/0"))
            return str(info.value)

        message = asyncio.run(tool())
        _clean(message)
        assert "request id" in message
    finally:
        service.graph_health.close()

    class Broken(KnowledgePlatform):
        def search(self, *args, **kwargs):  # a real Neo4j error where a search would run
            return self.graph.read_raw("RETURN 1/0")

    retriever = KGPlatformRetriever(
        platform=Broken(settings, graph=graph_session, embedder=embedder)
    )
    with pytest.raises(errors.GraphError) as info:
        retriever.invoke("anything")
    _clean(str(info.value))
    assert info.value.request_id and info.value.__cause__ is None  # type: ignore[attr-defined]
    assert info.value.__suppress_context__


def test_health_and_requests_name_no_bolt_address_when_neo4j_is_not_there(tmp_path) -> None:
    settings = Settings(
        neo4j={"uri": f"bolt://127.0.0.1:{_dead_port()}", "password": "x"},
        tuning={"neo4j": {"retry_s": 1.0}},
        data_dir=tmp_path / "data",
    )
    app = build_app(KnowledgePlatform(settings), key=KEY)
    client = TestClient(app)
    try:
        health = client.get("/v1/health")
        assert health.status_code == 503 and health.json()["status"] == "degraded"
        _clean(health.text)
        corpora = client.get("/v1/corpora", headers=AUTH)
        assert corpora.status_code == 503
        _clean(corpora.text)
        assert corpora.json()["request_id"] == corpora.headers["x-request-id"]
    finally:
        app.state.service.graph_health.close()
