"""``kgp serve`` with real clients: a uvicorn server on a loopback port over the test Neo4j,
driven with httpx. Search finds the MarkItDown format list in the top 3 (the same items as the
SDK), the key is required, a 20 MB body is refused before it is read, a bad strategy is a 422
problem with the platform's hint, an upload becomes a background run that ``runs`` shows
completed, the rate limit answers 429, and the ``kgp serve`` command's health endpoint answers
while its Neo4j is down and recovers when it is back."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from kg_platform._process import free_port
from kg_platform.config import ServeSettings
from kg_platform.demo import DEMO_QUESTION
from kg_platform.sdk import KnowledgePlatform
from tests.faults.helpers import KGP, kgp_env, run_kgp
from tests.support.http_api import api_client, problem, wait_run
from tests.support.serving import stop, wait_http

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parents[2] / "ingestion" / "samples"
CORPUS = "serve-samples"
KEY = "test-key-serve-http"
AUTH = {"Authorization": f"Bearer {KEY}"}
FORMATS = ["PowerPoint", "Word", "Excel", "HTML", "ZIP files", "EPubs"]


@pytest.fixture(scope="module")
def sdk(graph_session, settings, embedder):
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    report = platform.ingest([SAMPLES], corpus=CORPUS, exclude=["SOURCES.md"])
    assert report.status == "completed", report.summary()
    return platform


@pytest.fixture(scope="module")
def ingest_root(tmp_path_factory) -> Path:
    """The folder the server may ingest by path (serve.ingest_roots)."""
    return tmp_path_factory.mktemp("serve-root")


@pytest.fixture(scope="module")
def api(sdk, settings, embedder, ingest_root):
    """A real uvicorn server over its own platform object (its own driver), as `kgp serve`."""
    served = settings.model_copy(
        update={"serve": ServeSettings(rate_per_s=50, rate_burst=200, ingest_roots=[ingest_root])}
    )
    with api_client(served, embedder, KEY) as client:
        yield client


def test_search_returns_the_format_list_in_the_top_3_as_the_sdk_does(api, sdk) -> None:
    response = api.post(
        "/v1/search", json={"query": DEMO_QUESTION, "corpus": CORPUS, "k": 5}, headers=AUTH
    )
    assert response.status_code == 200, response.text[:2000]
    items = response.json()["items"]
    assert len(items) == 5
    assert all({"text", "score", "source_title"} <= set(it) for it in items)
    top3 = [it["text"] for it in items[:3]]
    assert any(sum(f in text for f in FORMATS) >= 5 for text in top3), top3
    assert items[0]["source_title"]
    # no logic of its own: the default path is the SDK's search with no strategy
    expected = sdk.search(DEMO_QUESTION, corpus=CORPUS, k=5)
    assert [it["id"] for it in items] == [it.id for it in expected.items]
    assert response.json()["strategy"] == sdk.settings.retrieve.strategy


def test_a_token_budget_fills_the_longest_prefix_within_it(api, sdk) -> None:
    from kg_platform.tokens import count_tokens

    response = api.post(
        "/v1/search",
        json={"query": DEMO_QUESTION, "corpus": CORPUS, "max_tokens": 300},
        headers=AUTH,
    )
    assert response.status_code == 200, response.text[:2000]
    texts = [it["text"] for it in response.json()["items"]]
    assert texts and sum(count_tokens(t) for t in texts) <= 300
    expected = sdk.search(DEMO_QUESTION, corpus=CORPUS, max_tokens=300)
    assert texts == [it.text for it in expected.items]
    full = sdk.search(DEMO_QUESTION, corpus=CORPUS, k=len(texts) + 5).items
    # a prefix of the unbudgeted ranking, only the last item possibly cut
    assert texts[:-1] == [it.text for it in full[: len(texts) - 1]]
    assert full[len(texts) - 1].text.startswith(texts[-1][:50])


def test_every_endpoint_but_health_needs_the_key(api) -> None:
    body = {"query": DEMO_QUESTION, "corpus": CORPUS}
    missing = problem(api.post("/v1/search", json=body), 401)
    assert "kgp serve key" in missing["hint"]
    problem(api.post("/v1/search", json=body, headers={"Authorization": "Bearer wrong"}), 401)
    problem(api.post("/v1/search", json=body, headers={"Authorization": KEY}), 401)
    problem(api.get("/v1/corpora"), 401)
    problem(api.get("/v1/runs"), 401)
    problem(api.post("/v1/ingest", json={"paths": ["/tmp"]}), 401)
    problem(api.delete(f"/v1/corpora/{CORPUS}"), 401)
    health = api.get("/v1/health")
    assert health.status_code == 200 and health.json()["neo4j"] == "reachable", health.text
    assert isinstance(health.json()["schema_version"], int)
    ready = api.get("/v1/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready", ready.text
    assert api.get("/openapi.json").json()["paths"]["/v1/search"]
    assert api.get("/docs").status_code == 200


def test_a_20_mb_body_is_refused_with_413(api) -> None:
    big = b'{"query": "' + b"x" * 20_000_000 + b'"}'
    headers = AUTH | {"Content-Type": "application/json"}
    body = problem(api.post("/v1/search", content=big, headers=headers), 413)
    assert "limit" in body["detail"] and body["hint"]

    def chunks():  # no Content-Length: the cap stops the stream once past the limit
        for _ in range(20):
            yield b" " * 1_000_000

    problem(api.post("/v1/search", content=chunks(), headers=headers), 413)
    # the connection pool and the server are fine afterwards
    assert api.get("/v1/health").status_code == 200


def test_a_bad_strategy_is_a_422_problem_with_the_platforms_hint(api) -> None:
    body = problem(
        api.post(
            "/v1/search",
            json={"query": DEMO_QUESTION, "corpus": CORPUS, "strategy": "no-such-strategy"},
            headers=AUTH,
        ),
        422,
    )
    assert "unknown strategy 'no-such-strategy'" in body["detail"], body
    assert "hybrid" in body["detail"], body  # the known strategies
    assert body["type"].endswith("invalid-request")
    invalid = problem(api.post("/v1/search", json={"corpus": CORPUS}, headers=AUTH), 422)
    assert "query" in invalid["detail"] and invalid["errors"]
    unknown = problem(api.post("/v1/search", json={"query": "x", "budget": 10}, headers=AUTH), 422)
    assert "budget" in unknown["detail"]
    gone = problem(api.post("/v1/search", json={"query": "x", "corpus": ""}, headers=AUTH), 422)
    assert "empty" in gone["detail"]
    no_room = problem(
        api.post("/v1/ask", json={"question": "x", "context_tokens": 0}, headers=AUTH), 422
    )
    assert "context_tokens" in no_room["detail"]
    problem(api.get("/v1/no-such-endpoint", headers=AUTH), 404)


def test_explain_ask_corpora_and_sources(api) -> None:
    explained = api.post(
        "/v1/explain", json={"query": DEMO_QUESTION, "corpus": CORPUS, "k": 3}, headers=AUTH
    )
    assert explained.status_code == 200, explained.text[:2000]
    out = explained.json()
    assert len(out["items"]) == 3 and out["browser"].startswith(":param ids =>")
    first = out["items"][0]["id"]
    one = api.post(
        "/v1/explain",
        json={"query": DEMO_QUESTION, "corpus": CORPUS, "k": 3, "item_id": first},
        headers=AUTH,
    ).json()
    assert [it["id"] for it in one["items"]] == [first] and first in one["browser"]

    answer = api.post("/v1/ask", json={"question": DEMO_QUESTION, "corpus": CORPUS}, headers=AUTH)
    assert answer.status_code == 200, answer.text[:2000]
    assert answer.json()["citations"] and answer.json()["answer"]

    corpora = api.get("/v1/corpora", headers=AUTH).json()["corpora"]
    mine = next(c for c in corpora if c["name"] == CORPUS)
    assert mine["sources"] == 3 and mine["chunks"] > 0

    source = api.get("/v1/sources/markitdown-README.md", params={"corpus": CORPUS}, headers=AUTH)
    assert source.status_code == 200, source.text[:2000]
    sections = source.json()["sections"]
    assert sections and any(sec["chunks"] for sec in sections)
    text = " ".join(c["text"] for sec in sections for c in sec["chunks"])
    assert "PowerPoint" in text
    problem(api.get("/v1/sources/no-such-doc", params={"corpus": CORPUS}, headers=AUTH), 422)
    problem(api.delete("/v1/corpora/no-such-corpus", headers=AUTH), 404)


def test_an_upload_is_ingested_in_the_background_and_runs_show_it(
    api, tmp_path, ingest_root
) -> None:
    corpus = "serve-upload"
    note = "The zebra-crossing protocol of Quillfeather Labs uses seven amber lanterns."
    response = api.post(
        "/v1/ingest/upload",
        data={"corpus": corpus},
        files=[("files", ("quillfeather.md", f"# Lanterns\n\n{note}\n".encode(), "text/markdown"))],
        headers=AUTH,
    )
    assert response.status_code == 202, response.text[:2000]
    run_id = response.json()["run_id"]
    assert run_id and run_id.startswith("run-"), response.json()
    run = wait_run(api, run_id, AUTH)
    assert run["status"] == "completed", run
    assert run["progress"] == {"done": 1, "total": 1} and run["errors"] == []
    listed = api.get("/v1/runs", params={"corpus": corpus}, headers=AUTH).json()["runs"]
    assert run_id in [r["id"] for r in listed]
    recorded = [r for r in listed if r["id"] == run_id]
    assert recorded[0]["status"] == "completed"

    found = api.post(
        "/v1/search",
        json={"query": "How many amber lanterns?", "corpus": corpus, "k": 1},
        headers=AUTH,
    ).json()["items"]
    assert "seven amber lanterns" in found[0]["text"]

    # a server-side folder, then dropping the corpus
    folder = ingest_root / "docs"
    folder.mkdir()
    (folder / "b.md").write_text("# B\n\nBasalt columns cool into hexagons.\n")
    started = api.post("/v1/ingest", json={"paths": [str(folder)], "corpus": corpus}, headers=AUTH)
    assert started.status_code == 202, started.text[:2000]
    second = started.json()["run_id"]
    assert wait_run(api, second, AUTH)["status"] == "completed"
    problem(api.post("/v1/ingest", json={"paths": [str(tmp_path / "nothing")]}, headers=AUTH), 422)
    dropped = api.delete(f"/v1/corpora/{corpus}", headers=AUTH)
    assert dropped.status_code == 200 and dropped.json()["sources_deleted"] == 2, dropped.text
    names = [c["name"] for c in api.get("/v1/corpora", headers=AUTH).json()["corpora"]]
    assert corpus not in names
    problem(api.get("/v1/runs/run-00000000T000000-deadbeef", headers=AUTH), 404)


def test_the_rate_limit_answers_429(sdk, settings, embedder) -> None:
    limited = settings.model_copy(update={"serve": ServeSettings(rate_per_s=0.2, rate_burst=3)})
    with api_client(limited, embedder, KEY, timeout=60) as client:
        codes = [client.get("/v1/corpora", headers=AUTH).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429], codes
        refused = client.get("/v1/corpora", headers=AUTH)
        body = problem(refused, 429)
        assert int(refused.headers["retry-after"]) >= 1 and body["hint"]


@pytest.fixture()
def own_neo4j(spare_neo4j, tmp_path):
    """The suite's spare Neo4j: it is stopped and started again under the API (the test also
    checks ``LocalNeo4j``'s own stop, status and start on it: one restart for both)."""
    from kg_platform.config import Settings

    server = spare_neo4j
    settings = Settings(
        neo4j={"uri": server.bolt_uri(), "password": server.password()},
        data_dir=tmp_path / "kgp-data",
    )
    return server, settings


@pytest.mark.slow
def test_kgp_serve_health_answers_while_neo4j_is_down_and_recovers(own_neo4j) -> None:
    server, settings = own_neo4j
    env = kgp_env(settings)
    env.pop("KGP_API_KEY", None)
    printed = run_kgp(["serve", "key"], env)
    assert printed.returncode == 0, printed.stderr
    key = printed.stdout.strip()
    key_file = settings.data_dir / "serve" / "api-key"
    assert key and key_file.read_text().strip() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert run_kgp(["serve", "key"], env).stdout.strip() == key  # made once, then kept
    from_env = "from-env-0123456789abcdef0123456789"
    assert run_kgp(["serve", "key"], env | {"KGP_API_KEY": from_env}).stdout.strip() == from_env
    assert run_kgp(["init"], env).returncode == 0

    port = free_port()
    proc = subprocess.Popen(
        [str(KGP), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/v1/health", proc)
        with httpx.Client(base_url=base, timeout=60) as client:
            assert client.get("/v1/health").status_code == 200
            auth = {"Authorization": f"Bearer {key}"}
            assert client.get("/v1/corpora", headers=auth).status_code == 200

            assert server.stop() is True
            assert not server.status().running
            assert server.stop() is False  # stopping twice is harmless
            started = time.monotonic()
            down = client.get("/v1/health")
            assert time.monotonic() - started < 15
            assert down.status_code == 503, down.text
            assert down.json()["status"] == "degraded" and down.json()["neo4j"] == "unreachable"
            assert down.json()["hint"]
            failed = problem(client.get("/v1/corpora", headers=auth), 503)
            assert "unavailable" in failed["detail"].lower() and failed["hint"]

            status = server.start()
            assert status.running and status.pid and status.version.startswith("5.26.")
            assert server.status().running
            deadline = time.monotonic() + 120
            while (back := client.get("/v1/health")).status_code != 200:
                assert time.monotonic() < deadline, back.text
                time.sleep(0.5)
            assert back.json()["status"] == "ok" and back.json()["schema_version"]
            assert client.get("/v1/corpora", headers=auth).status_code == 200
            assert proc.poll() is None  # the same API process all along
    finally:
        out, err = stop(proc)
    assert key not in out and key not in err  # the key is never logged
    assert "Traceback" not in err, err[-3000:]


def test_the_key_file_is_private(tmp_path) -> None:
    from kg_platform.config import Settings
    from kg_platform.serve.auth import api_key

    settings = Settings(data_dir=tmp_path / "data")
    old = os.environ.pop("KGP_API_KEY", None)
    try:
        key = api_key(settings)
    finally:
        if old is not None:
            os.environ["KGP_API_KEY"] = old
    assert len(key) >= 32
    assert stat.S_IMODE((tmp_path / "data" / "serve" / "api-key").stat().st_mode) == 0o600


def test_an_http_load_counts_every_request(api) -> None:
    # the load client is the lab's (kgp lab bench load --http)
    run_http_load = pytest.importorskip("kg_platform_lab.bench.load_http").run_http_load

    result = run_http_load(
        str(api.base_url), KEY, clients=3, seconds=2, strategy="bm25", corpus=CORPUS
    )
    summary = result.summary()
    assert summary["requests"] > 0 and summary["errors"] == {}, summary
    assert summary["p50_ms"] <= summary["p95_ms"] <= summary["p99_ms"]
    with pytest.raises(Exception, match="HTTP 401"):
        run_http_load(str(api.base_url), "not-the-key", clients=1, seconds=1)


@pytest.mark.slow
def test_kgp_bench_load_http_starts_kgp_serve_and_reports_percentiles(sdk, settings) -> None:
    import json

    pytest.importorskip("kg_platform_lab")
    out = run_kgp(
        [
            "lab",
            "bench",
            "load",
            "--http",
            "--clients",
            "2",
            "--seconds",
            "3",
            "--corpus",
            CORPUS,
            "--strategy",
            "bm25",
            "--json",
        ],
        kgp_env(settings),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["transport"] == "http" and summary["errors"] == {}
    assert summary["requests"] > 0 and summary["p50_ms"] <= summary["p95_ms"]
