"""Issue 54 item 8 (and the "Low" findings): every 4xx/5xx answer of the HTTP API is RFC 9457
problem+json with the documented fields (type, title, status, detail, instance, request_id and
a hint), every answer carries an ``X-Request-Id`` that the problem body repeats, and each error
class's problem type reads well (``llm-error``, not ``l-l-m-error``).

These requests never reach the database (routing, body parsing, the gate), so the app is
driven in-process without its lifespan."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from kg_platform import errors
from kg_platform.config import ServeSettings, Settings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app
from kg_platform.serve.problems import problem_for

KEY = "test-key-problems-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
FIELDS = {"type", "title", "status", "detail", "instance", "request_id", "hint"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("kgp-data"),
        serve=ServeSettings(rate_per_s=0.001, rate_burst=30, max_body_bytes=10_000),
    )
    app = build_app(KnowledgePlatform(settings), key=KEY)
    return TestClient(app, raise_server_exceptions=False)


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.text[:1000]
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert FIELDS <= set(body), (status, sorted(FIELDS - set(body)))
    assert body["status"] == status and body["type"].startswith("urn:kg-platform:problem:")
    assert body["title"] and body["detail"] and body["hint"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body


def test_each_client_error_has_every_problem_field(client) -> None:
    malformed = client.post(
        "/v1/search", content=b'{"query": ', headers=AUTH | {"content-type": "application/json"}
    )
    assert _problem(malformed, 400)["type"].endswith(":malformed-json")
    _problem(client.get("/v1/no-such-endpoint", headers=AUTH), 404)
    assert _problem(client.get("/v1/search", headers=AUTH), 405)["title"] == "Method not allowed"
    _problem(client.post("/v1/search", content=b"x" * 20_000, headers=AUTH), 413)
    not_json = client.post(
        "/v1/search", content=b"query=x", headers=AUTH | {"content-type": "text/plain"}
    )
    assert "application/json" in _problem(not_json, 415)["hint"]
    _problem(client.post("/v1/search", json={"k": 3}, headers=AUTH), 422)
    _problem(client.post("/v1/search", json={"query": "x"}), 401)
    _problem(client.post("/v1/search", json={"query": "x"}, headers={"Authorization": "x"}), 401)


def test_the_rate_limit_answer_has_every_problem_field(client) -> None:
    answers = [client.get("/v1/nothing-here", headers=AUTH) for _ in range(40)]
    limited = [r for r in answers if r.status_code == 429]
    assert limited, [r.status_code for r in answers]
    _problem(limited[0], 429)
    assert int(limited[0].headers["retry-after"]) >= 1


def test_every_answer_has_its_own_request_id(client) -> None:
    first = client.get("/v1/health-no")
    second = client.get("/v1/health-no")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    kept = client.get("/v1/nope", headers={"X-Request-Id": "proxy-id-1234"})
    assert kept.headers["x-request-id"] == "proxy-id-1234" == kept.json()["request_id"]
    hostile = client.get("/v1/nope", headers={"X-Request-Id": "a\tb<script>" * 3})
    assert re.fullmatch(r"[0-9a-f]{16}", hostile.headers["x-request-id"])
    assert client.get("/openapi.json").headers["x-request-id"]  # successes too


def _classes(root: type) -> list[type]:
    out = [root]
    for sub in root.__subclasses__():
        out.extend(_classes(sub))
    return out


def test_every_error_class_has_a_readable_problem_type() -> None:
    from kg_platform.serve.problems import type_name

    names = {cls.__name__: type_name(cls) for cls in _classes(errors.KGPError)}
    expected = {
        "KGPError": "kgp-error",
        "ConfigError": "config-error",
        "CorpusNotFound": "corpus-not-found",
        "Neo4jServerError": "neo4j-server-error",
        "GraphError": "graph-error",
        "SchemaError": "schema-error",
        "VectorDimensionMismatch": "vector-dimension-mismatch",
        "CypherNotFound": "cypher-not-found",
        "EmbeddingError": "embedding-error",
        "ParseError": "parse-error",
        "UnsupportedFormat": "unsupported-format",
        "EncryptedDocument": "encrypted-document",
        "CorruptDocument": "corrupt-document",
        "EmptyDocument": "empty-document",
        "NeedsOCR": "needs-ocr",
        "SourceTooLarge": "source-too-large",
        "IngestionError": "ingestion-error",
        "RetrievalError": "retrieval-error",
        "LLMError": "llm-error",
        "LLMNotConfigured": "llm-not-configured",
        "LLMOutputInvalid": "llm-output-invalid",
        "EvaluationError": "evaluation-error",
        "JobError": "job-error",
        "JobLocked": "job-locked",
    }
    for name, kind in names.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", kind), (name, kind)
        if name in expected:
            assert kind == expected[name], (name, kind)
    assert set(expected) <= set(names)
    problem = problem_for(errors.LLMError("the endpoint said no"))
    assert problem.body()["type"] == "urn:kg-platform:problem:llm-error"
    assert problem_for(errors.LLMNotConfigured("no LLM")).kind == "llm-not-configured"
