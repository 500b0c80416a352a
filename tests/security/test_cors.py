"""Issue 54: no CORS setting. CORS is off by default (no ``Access-Control-*`` header for any
origin, preflights refused); ``serve.cors_origins`` allows the origins it names, and only them:
their preflight is answered (without the API key: a browser sends none with it) and their
answers carry ``Access-Control-Allow-Origin`` and expose ``X-Request-Id``."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kg_platform.config import ServeSettings, Settings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app

KEY = "test-key-cors-0123456789abcdef-0123"
ALLOWED = "https://app.example.com"
OTHER = "https://evil.example.net"


def _client(tmp_path, **serve) -> TestClient:
    settings = Settings(data_dir=tmp_path / "data", serve=ServeSettings(**serve))
    return TestClient(build_app(KnowledgePlatform(settings), key=KEY))


def _preflight(client: TestClient, origin: str):
    return client.options(
        "/v1/search",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )


def test_cors_is_off_by_default(tmp_path) -> None:
    client = _client(tmp_path)
    for origin in (ALLOWED, OTHER):
        answer = _preflight(client, origin)
        assert answer.status_code != 200 or "access-control-allow-origin" not in answer.headers
        assert not [h for h in answer.headers if h.startswith("access-control-")], answer.headers
        plain = client.get("/openapi.json", headers={"Origin": origin})
        assert not [h for h in plain.headers if h.startswith("access-control-")]


def test_named_origins_are_allowed_and_no_other(tmp_path) -> None:
    client = _client(tmp_path, cors_origins=[ALLOWED])
    allowed = _preflight(client, ALLOWED)
    assert allowed.status_code == 200, allowed.text
    assert allowed.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    refused = _preflight(client, OTHER)
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    # a real request of the allowed origin is marked (its 401 too); another origin's is not
    marked = client.post("/v1/search", json={"query": "x"}, headers={"Origin": ALLOWED})
    assert marked.status_code == 401
    assert marked.headers["access-control-allow-origin"] == ALLOWED
    assert "x-request-id" in marked.headers["access-control-expose-headers"].lower()
    unmarked = client.post("/v1/search", json={"query": "x"}, headers={"Origin": OTHER})
    assert "access-control-allow-origin" not in unmarked.headers


def test_the_setting_is_described() -> None:
    field = ServeSettings.model_fields["cors_origins"]
    assert field.description and ServeSettings().cors_origins == []
