"""Keys scoped to corpora, and limits that cannot be sidestepped (issue 54, items 2 and 6).

Real servers (uvicorn on a loopback port over the test Neo4j, ``kgp`` subprocesses) and real
clients (httpx, the ``mcp`` SDK's client):

- the rate limit counts a key by its name, however its header is spelt (``bearer KEY`` shares
  ``Bearer KEY``'s bucket; ``Bearer  KEY`` is no key at all);
- wrong keys get 429 after a few failures, with a Retry-After that grows;
- a ``read`` key for corpus A gets no byte of corpus B through search, explain, ask, sources,
  runs, the corpus list, MCP tools or MCP resources, cannot tell B from a corpus that does not
  exist, and cannot ingest, upload or drop;
- ``kgp serve keys add|list|revoke``; two servers on one Neo4j share the keys and a revocation
  holds on both within a second; a short ``KGP_API_KEY`` is refused at start.
"""

from __future__ import annotations

import re

import asyncio
import json
import subprocess
import time
from typing import Any

import httpx
import pytest

from kg_platform._process import free_port
from kg_platform.config import ServeSettings
from kg_platform.sdk import KnowledgePlatform
from kg_platform.serve.app import build_app
from kg_platform.serve.keys import KeyStore, key_hash
from tests.faults.helpers import KGP, kgp_env, run_kgp
from tests.support.driver_log import driver_retries
from tests.support.serving import stop, uvicorn_thread

pytestmark = pytest.mark.integration

A, B = "sec-a", "sec-b"
NOWHERE = "sec-nowhere"  # a corpus that does not exist
A_TEXT = "The amber lighthouse of Quillport flashes twice every night over the harbour."
B_TEXT = "The vault code of Brinemoor is zircon-7419; only the warden may read it."
B_CONTENT = ("Brinemoor", "zircon", "7419")
B_MARKERS = (*B_CONTENT, B)
SERVER_KEY = "test-server-key-security-0123456789abcdef"
ROOMY = ServeSettings(rate_per_s=100, rate_burst=400)
#: failed authentications tolerated per address (tuning serve.auth_fail_limit)
ROOMY_FAILS = 1000


@pytest.fixture(scope="module")
def platform(graph_session, settings, embedder, tmp_path_factory):
    """Two corpora, A and B, each one small document, and B's run id."""
    kp = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    root = tmp_path_factory.mktemp("corpora")
    runs = {}
    for corpus, name, text in ((A, "a.md", A_TEXT), (B, "b.md", B_TEXT)):
        folder = root / corpus
        folder.mkdir()
        (folder / name).write_text(f"# {name}\n\n{text}\n")
        report = kp.ingest([folder], corpus=corpus)
        assert report.status == "completed", report.summary()
        runs[corpus] = report.run_id
    kp.b_run = runs[B]  # type: ignore[attr-defined]
    return kp


@pytest.fixture(scope="module")
def keys(platform) -> dict[str, str]:
    store = KeyStore(platform.graph)
    made = {}
    for name, corpora, rights in (
        ("sec-reader-a", [A], "read"),
        ("sec-writer-a", [A], "write"),
        ("sec-reader-glob", [A, "sec-c*"], "read"),
    ):
        made[name], _ = store.add(name, corpora, rights)
    return made


def _served(settings, embedder, serve: ServeSettings = ROOMY, fail_limit: int = ROOMY_FAILS) -> Any:
    served = settings.model_copy(update={"serve": serve}).with_tuning(
        serve={"auth_fail_limit": fail_limit}
    )
    return build_app(KnowledgePlatform(served, embedder=embedder), key=SERVER_KEY)


@pytest.fixture(scope="module")
def api(platform, keys, settings, embedder):
    with uvicorn_thread(_served(settings, embedder)) as base:
        with httpx.Client(base_url=base, timeout=120) as client:
            yield client


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _no_b(response: httpx.Response, *, named: bool = False) -> None:
    """Nothing of B in ``response`` (not even its name, unless the request ``named`` it)."""
    for marker in B_CONTENT if named else B_MARKERS:
        assert marker not in response.text, (marker, response.text[:1000])


def _comparable(body: dict[str, Any], name: str) -> str:
    """A problem body with the corpus (or run) name and per-request fields taken out."""
    kept = {k: v for k, v in body.items() if "request" not in k.lower()}
    return json.dumps(kept, sort_keys=True).replace(name, "NAME")


def _same_as_missing(hidden: httpx.Response, missing: httpx.Response, a: str, b: str) -> None:
    assert hidden.status_code == missing.status_code == 404, (hidden.text, missing.text)
    assert hidden.headers["content-type"] == missing.headers["content-type"]
    assert _comparable(hidden.json(), a) == _comparable(missing.json(), b)
    assert "not found" in hidden.text.lower() or "no corpus" in hidden.text.lower()
    assert "forbidden" not in hidden.text.lower()


# ------------------------------------------------------------------------------ limits


def test_the_rate_limit_counts_the_key_not_the_spelling_of_its_header(platform, settings, embedder):
    tight = ServeSettings(rate_per_s=0.01, rate_burst=3)
    with uvicorn_thread(_served(settings, embedder, tight)) as base:
        with httpx.Client(base_url=base, timeout=60) as client:
            codes = [
                client.get("/v1/strategies", headers={"Authorization": f"Bearer {SERVER_KEY}"})
                for _ in range(3)
            ]
            assert [r.status_code for r in codes] == [200, 200, 200]
            # the same key under another spelling of the scheme: the same, empty, bucket
            for scheme in ("bearer", "BEARER", "BeArEr"):
                again = client.get(
                    "/v1/strategies", headers={"Authorization": f"{scheme} {SERVER_KEY}"}
                )
                assert again.status_code == 429, (scheme, again.text)
            # anything but one space and one token is no key
            for header in (
                f"Bearer  {SERVER_KEY}",
                f"Bearer\t{SERVER_KEY}",
                f"Bearer {SERVER_KEY} x",
                f"Bearer {SERVER_KEY},",
                f"Token {SERVER_KEY}",
                SERVER_KEY,
            ):
                refused = client.get("/v1/strategies", headers={"Authorization": header})
                assert refused.status_code == 401, (header, refused.text)
            twice = client.get(
                "/v1/strategies",
                headers=[("Authorization", f"Bearer {SERVER_KEY}")] * 2,
            )
            assert twice.status_code == 401, twice.text


def test_wrong_keys_get_429_with_a_growing_retry_after(platform, settings, embedder):
    strict = ServeSettings(rate_per_s=100, rate_burst=400)
    wrong = _auth("kgp_" + "x" * 43)
    with uvicorn_thread(_served(settings, embedder, strict, fail_limit=3)) as base:
        with httpx.Client(base_url=base, timeout=60) as client:
            codes = [client.get("/v1/corpora", headers=wrong).status_code for _ in range(3)]
            assert codes == [401, 401, 401]
            blocked = client.get("/v1/corpora", headers=wrong)
            assert blocked.status_code == 429, blocked.text
            first = int(blocked.headers["retry-after"])
            assert first >= 1 and blocked.json()["hint"]
            # while blocked, the right key is refused too (a guess costs the same either way)
            assert client.get("/v1/corpora", headers=_auth(SERVER_KEY)).status_code == 429
            assert client.get("/v1/health").status_code == 200  # open paths stay open
            time.sleep(first + 0.2)
            assert client.get("/v1/corpora", headers=_auth(SERVER_KEY)).status_code == 200
            codes = [client.get("/v1/corpora", headers=wrong).status_code for _ in range(3)]
            assert codes == [401, 401, 401]
            again = client.get("/v1/corpora", headers=wrong)
            assert again.status_code == 429
            assert int(again.headers["retry-after"]) > first


# --------------------------------------------------------------------------- isolation


def test_a_read_key_for_a_gets_nothing_of_b_over_http(api, platform, keys) -> None:
    reader = _auth(keys["sec-reader-a"])
    admin = _auth(SERVER_KEY)
    assert B in [c["name"] for c in api.get("/v1/corpora", headers=admin).json()["corpora"]]

    listed = api.get("/v1/corpora", headers=reader)
    assert listed.status_code == 200 and [c["name"] for c in listed.json()["corpora"]] == [A]
    _no_b(listed)

    for path, body in (
        ("/v1/search", {"query": "the vault code the warden reads"}),
        ("/v1/explain", {"query": "the vault code the warden reads"}),
        ("/v1/ask", {"question": "What is the vault code the warden reads?"}),
    ):
        hidden = api.post(path, json=body | {"corpus": B}, headers=reader)
        missing = api.post(path, json=body | {"corpus": NOWHERE}, headers=reader)
        _same_as_missing(hidden, missing, B, NOWHERE)
        _no_b(hidden, named=True)
        # no corpus named: the key's own corpus, never B
        mine = api.post(path, json=body, headers=reader)
        assert mine.status_code == 200, mine.text[:1000]
        _no_b(mine)
    found = api.post("/v1/search", json={"query": "amber lighthouse"}, headers=reader).json()
    assert found["items"] and "Quillport" in found["items"][0]["text"]

    hidden = api.get("/v1/sources/b.md", params={"corpus": B}, headers=reader)
    missing = api.get("/v1/sources/b.md", params={"corpus": NOWHERE}, headers=reader)
    _same_as_missing(hidden, missing, B, NOWHERE)
    unscoped = api.get("/v1/sources/b.md", headers=reader)  # searched in A only
    assert unscoped.status_code == 422 and A in unscoped.json()["detail"], unscoped.text
    _no_b(unscoped)
    assert api.get("/v1/sources/b.md", params={"corpus": B}, headers=admin).status_code == 200

    runs = api.get("/v1/runs", headers=reader)
    assert runs.status_code == 200 and runs.json()["runs"]
    assert {r["corpus"] for r in runs.json()["runs"]} == {A}
    _no_b(runs)
    assert platform.b_run in api.get("/v1/runs", headers=admin).text
    hidden = api.get("/v1/runs", params={"corpus": B}, headers=reader)
    missing = api.get("/v1/runs", params={"corpus": NOWHERE}, headers=reader)
    _same_as_missing(hidden, missing, B, NOWHERE)
    nobody = "run-00000000T000000-deadbeef"
    hidden = api.get(f"/v1/runs/{platform.b_run}", headers=reader)
    missing = api.get(f"/v1/runs/{nobody}", headers=reader)
    _same_as_missing(hidden, missing, platform.b_run, nobody)
    assert api.get(f"/v1/runs/{platform.b_run}", headers=admin).status_code == 200


def test_a_key_of_several_corpora_must_name_one_and_is_not_told_which(api, keys) -> None:
    glob = _auth(keys["sec-reader-glob"])
    for path, body in (
        ("/v1/search", {"query": "vault code"}),
        ("/v1/explain", {"query": "vault code"}),
    ):
        answer = api.post(path, json=body, headers=glob)
        assert answer.status_code == 422, answer.text
        assert "GET /v1/corpora" in answer.json()["hint"]
        assert A not in answer.text and "sec-c" not in answer.text
        _no_b(answer)
    names = [c["name"] for c in api.get("/v1/corpora", headers=glob).json()["corpora"]]
    assert names == [A]
    hidden = api.post("/v1/search", json={"query": "x", "corpus": B}, headers=glob)
    missing = api.post("/v1/search", json={"query": "x", "corpus": "sec-c-none"}, headers=glob)
    assert hidden.status_code == 404, hidden.text
    _no_b(hidden, named=True)
    # sec-c-none matches the key's glob: the server's own answer for a corpus that is not
    # there (200 without items before corpora are checked at every door, 404 after)
    assert missing.status_code in (200, 404)


def test_a_read_key_cannot_ingest_upload_record_or_drop(api, platform, keys, tmp_path) -> None:
    reader = _auth(keys["sec-reader-a"])
    admin = _auth(SERVER_KEY)
    (tmp_path / "c.md").write_text("# C\n\nNothing to see.\n")
    paths = {"paths": [str(tmp_path)]}

    refused = api.post("/v1/ingest", json=paths | {"corpus": A}, headers=reader)
    assert refused.status_code == 403 and "write" in refused.json()["hint"], refused.text
    hidden = api.post("/v1/ingest", json=paths | {"corpus": B}, headers=reader)
    missing = api.post("/v1/ingest", json=paths | {"corpus": NOWHERE}, headers=reader)
    _same_as_missing(hidden, missing, B, NOWHERE)

    uploads = platform.settings.data_dir / "serve" / "uploads"
    before = sorted(p for p in uploads.rglob("*")) if uploads.exists() else []
    files = [("files", ("c.md", b"# C\n\nuploaded\n", "text/markdown"))]
    up = api.post("/v1/ingest/upload", data={"corpus": A}, files=files, headers=reader)
    assert up.status_code == 403, up.text
    up = api.post("/v1/ingest/upload", data={"corpus": B}, files=files, headers=reader)
    assert up.status_code == 404, up.text
    after = sorted(p for p in uploads.rglob("*")) if uploads.exists() else []
    assert after == before  # nothing was written

    recorded = api.post("/v1/search", json={"query": "amber", "record": True}, headers=reader)
    assert recorded.status_code == 403, recorded.text

    assert api.delete(f"/v1/corpora/{A}", headers=reader).status_code == 403
    hidden = api.delete(f"/v1/corpora/{B}", headers=reader)
    missing = api.delete(f"/v1/corpora/{NOWHERE}", headers=reader)
    _same_as_missing(hidden, missing, B, NOWHERE)
    # and the key's 404 for B is the server's own 404 for a corpus that is not there
    truly = api.delete(f"/v1/corpora/{NOWHERE}", headers=admin)
    _same_as_missing(hidden, truly, B, NOWHERE)
    assert B in [c.name for c in platform.corpora()]

    writer = _auth(keys["sec-writer-a"])
    assert api.post("/v1/search", json={"query": "amber"}, headers=writer).status_code == 200
    hidden = api.delete(f"/v1/corpora/{B}", headers=writer)
    _same_as_missing(hidden, missing, B, NOWHERE)
    assert B in [c.name for c in platform.corpora()]


def test_a_read_key_for_a_gets_nothing_of_b_over_mcp(platform, keys, settings, embedder) -> None:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from kg_platform.serve.mcp_server import mcp_http_app

    served = settings.model_copy(update={"serve": ROOMY}).with_tuning(
        serve={"auth_fail_limit": ROOMY_FAILS}
    )
    app = mcp_http_app(
        KnowledgePlatform(served, embedder=embedder), key=SERVER_KEY, host="127.0.0.1"
    )

    def text(result: Any) -> str:
        said = " ".join(getattr(c, "text", "") for c in result.content)
        return re.sub(r"request id [0-9a-f]+", "request id X", said)  # each answer has its own

    async def main(url: str) -> None:
        async with create_mcp_http_client(headers=_auth(keys["sec-reader-a"])) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                listed = await client.call_tool("list_corpora", {})
                assert not listed.is_error
                assert [c["name"] for c in listed.structured_content["corpora"]] == [A]
                for tool, args in (
                    ("search", {"query": "the vault code the warden reads"}),
                    ("explain", {"query": "the vault code the warden reads"}),
                    ("ask", {"question": "What is the vault code the warden reads?"}),
                    ("get_source", {"source": "b.md"}),
                ):
                    hidden = await client.call_tool(tool, args | {"corpus": B})
                    missing = await client.call_tool(tool, args | {"corpus": NOWHERE})
                    assert hidden.is_error and missing.is_error, (tool, text(hidden))
                    assert text(hidden).replace(B, "N") == text(missing).replace(NOWHERE, "N")
                    assert "forbidden" not in text(hidden).lower()
                    mine = await client.call_tool(tool, args)  # the key's own corpus
                    for marker in B_MARKERS:
                        assert marker not in text(mine), (tool, marker)
                        assert marker not in json.dumps(mine.structured_content or {})
                read = await client.read_resource("kgp://corpora")
                assert [c["name"] for c in json.loads(read.contents[0].text)] == [A]
                assert (
                    json.loads((await client.read_resource(f"kgp://corpora/{A}")).contents[0].text)[
                        "sources"
                    ]
                    == 1
                )
                errors = []
                for name in (B, NOWHERE):
                    try:
                        await client.read_resource(f"kgp://corpora/{name}")
                    except Exception as exc:  # noqa: BLE001 - the client raises the MCP error
                        errors.append(str(exc).replace(name, "N"))
                assert len(errors) == 2 and errors[0] == errors[1], errors

    with uvicorn_thread(app) as base:
        asyncio.run(asyncio.wait_for(main(f"{base}/mcp"), timeout=300))


# ------------------------------------------------------------------ CLI and replicas


def test_keys_add_list_revoke_through_the_cli(api, platform, settings) -> None:
    env = kgp_env(settings)
    added = run_kgp(["serve", "keys", "add", "sec-cli", "--corpora", f"{A},team-*"], env)
    assert added.returncode == 0, added.stderr
    key = added.stdout.strip().splitlines()[-1]
    assert key.startswith("kgp_") and len(key) >= 40
    time.sleep(1.0)  # the contract: a key added anywhere holds on every server within a second
    listed_corpora = api.get("/v1/corpora", headers=_auth(key))
    assert listed_corpora.status_code == 200, listed_corpora.text
    assert listed_corpora.json()["corpora"][0]["name"] == A

    listed = run_kgp(["serve", "keys", "list"], env)
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("sec-cli "))
    assert f"{A},team-*" in line and "read" in line and line.rstrip().endswith("-")
    as_json = json.loads(run_kgp(["serve", "keys", "list", "--json"], env).stdout)
    mine = next(k for k in as_json if k["name"] == "sec-cli")
    assert mine["corpora"] == [A, "team-*"] and mine["revoked_at"] is None
    for shown in (listed.stdout, json.dumps(as_json)):
        assert key not in shown and key_hash(key) not in shown
    stored = platform.graph.read_raw("MATCH (k:ApiKey {name: 'sec-cli'}) RETURN k AS k")
    assert key not in json.dumps(dict(stored[0]["k"]), default=str)  # hashed, never in clear

    for args, words in (
        (["add", "sec-cli", "--corpora", A], "exists already"),
        (["add", "sec-other", "--corpora", A, "--rights", "root"], "unknown right"),
        (["add", "sec-other", "--corpora", ","], "at least one corpus"),
        (["revoke", "sec-no-such-key"], "no API key named"),
    ):
        failed = run_kgp(["serve", "keys", *args], env)
        assert failed.returncode == 2, (args, failed.stdout, failed.stderr)
        assert words in failed.stderr and "hint:" in failed.stderr, failed.stderr
        assert failed.stdout.strip() == ""  # no key printed

    revoked = run_kgp(["serve", "keys", "revoke", "sec-cli"], env)
    assert revoked.returncode == 0, revoked.stderr
    time.sleep(1.0)
    assert api.get("/v1/corpora", headers=_auth(key)).status_code == 401
    listed = run_kgp(["serve", "keys", "list"], env).stdout
    line = next(ln for ln in listed.splitlines() if ln.startswith("sec-cli "))
    assert not line.rstrip().endswith("-")  # the revocation time
    again = run_kgp(["serve", "keys", "revoke", "sec-cli"], env)
    assert again.returncode == 2 and "already revoked" in again.stderr


def test_two_servers_on_one_neo4j_share_keys_and_revocations(platform, settings, embedder):
    """Two apps over two platform objects (two drivers), as two `kgp serve` replicas."""
    served = settings.model_copy(update={"serve": ROOMY}).with_tuning(
        serve={"auth_fail_limit": ROOMY_FAILS}
    )
    kp1 = KnowledgePlatform(served, embedder=embedder)
    kp2 = KnowledgePlatform(served, embedder=embedder)
    with (
        uvicorn_thread(build_app(kp1, key=SERVER_KEY)) as one,
        uvicorn_thread(build_app(kp2, key=SERVER_KEY)) as two,
        httpx.Client(base_url=one, timeout=60) as first,
        httpx.Client(base_url=two, timeout=60) as second,
    ):
        key = "kgp_" + "r" * 43
        for client in (first, second):  # both have read the key table: no such key
            assert client.get("/v1/corpora", headers=_auth(key)).status_code == 401
        # a key added through the first server's platform works on the second within 1 s
        key, _ = KeyStore(kp1.graph).add("sec-replica", [A], "read")
        time.sleep(1.0)
        for client in (second, first):
            answer = client.get("/v1/corpora", headers=_auth(key))
            assert answer.status_code == 200, answer.text
            assert [c["name"] for c in answer.json()["corpora"]] == [A]
        # revoked through the second: refused by both a second later
        KeyStore(kp2.graph).revoke("sec-replica")
        time.sleep(1.0)
        for client in (first, second):
            assert client.get("/v1/corpora", headers=_auth(key)).status_code == 401


# ----------------------------------------------------------------------------- start


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_a_short_key_is_refused_at_start(settings, command: list[str]) -> None:
    port = str(free_port())
    proc = subprocess.Popen(
        [str(KGP), *command, "--port", port],
        env=kgp_env(settings, KGP_API_KEY="a"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        pass
    out, err = stop(proc)
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "at least 32" in err and "token_urlsafe" in err, err[-2000:]
    assert "Traceback" not in err


def test_the_key_checks_in_one_process(tmp_path) -> None:
    """The parts without a server: the short key at start, strict parsing, the back-off."""
    import os

    from kg_platform.config import Settings
    from kg_platform.errors import ConfigError
    from kg_platform.serve.auth import api_key
    from kg_platform.serve.keys import bearer_token
    from kg_platform.serve.limits import AuthFailures

    old = os.environ.get("KGP_API_KEY")
    try:
        for short in ("a", "x" * 31, "y" * 40 + " z"):
            os.environ["KGP_API_KEY"] = short
            with pytest.raises(ConfigError) as caught:
                api_key(Settings(data_dir=tmp_path))
            assert "token_urlsafe" in caught.value.hint
        os.environ["KGP_API_KEY"] = "k" * 32
        assert api_key(Settings(data_dir=tmp_path)) == "k" * 32
        del os.environ["KGP_API_KEY"]
        (tmp_path / "serve").mkdir()
        (tmp_path / "serve" / "api-key").write_text("short\n")
        with pytest.raises(ConfigError):
            api_key(Settings(data_dir=tmp_path))
    finally:
        os.environ.pop("KGP_API_KEY", None)
        if old is not None:
            os.environ["KGP_API_KEY"] = old

    def parsed(*values: bytes) -> str | None:
        return bearer_token([(b"authorization", v) for v in values] + [(b"host", b"x")])

    assert parsed(b"Bearer abc-._~+/==") == "abc-._~+/=="
    assert parsed(b"bEaReR abc") == "abc"
    for bad in (b"Bearer  abc", b"Bearer abc ", b"Bearer a=b", b"Bearer", b"Basic abc", b"abc"):
        assert parsed(bad) is None, bad
    assert parsed(b"Bearer abc", b"Bearer abc") is None

    failures = AuthFailures(3, 60.0, first_block_s=10.0)
    for _ in range(2):
        failures.failed("10.0.0.1")
    assert failures.wait("10.0.0.1") == 0
    failures.failed("10.0.0.1")
    assert 9 < failures.wait("10.0.0.1") <= 10 and failures.wait("10.0.0.2") == 0


def test_no_key_file_is_in_the_graph_and_unknown_records_are_no_keys(platform) -> None:
    """A record with an unknown right (written by hand) is never a key."""
    graph = platform.graph
    graph.write_raw(
        "CREATE (:ApiKey {name: 'sec-hand', key_hash: $h, corpora: ['*'], rights: 'root'})",
        h=key_hash("kgp_" + "h" * 43),
    )
    try:
        assert "sec-hand" not in [p.name for _, p in KeyStore(graph).active()]
    finally:
        graph.write_raw("MATCH (k:ApiKey {name: 'sec-hand'}) DELETE k")


def test_the_server_key_needs_no_graph_and_a_graph_key_does() -> None:
    """The server's own key is checked without the database; a graph key is not: while the
    key table cannot be read, it is refused with 503 (never let through)."""
    from kg_platform.serve.keys import KeyRing, KeysUnavailable

    def down() -> Any:
        raise OSError("no database")

    ring = KeyRing(down, server_key=SERVER_KEY)

    async def check() -> None:
        assert (await ring.resolve(SERVER_KEY)).right == "admin"
        with pytest.raises(KeysUnavailable):
            await ring.resolve("kgp_" + "z" * 43)

    asyncio.run(check())


def test_while_the_breaker_is_open_graph_keys_get_503_without_a_load() -> None:
    """Fail fast (item 7): while the server's breaker is open, a graph key whose copy of the
    table is too old is refused with 503 at once: no load is started (it would only wait on a
    database known to be gone), and a load that fails opens the breaker."""
    from kg_platform.serve.health import GraphHealth
    from kg_platform.serve.keys import KeyRing, KeysUnavailable

    def dead() -> None:
        raise OSError("no database")

    loads: list[int] = []

    def table() -> Any:
        loads.append(1)
        raise OSError("no database")

    health = GraphHealth(dead, interval_s=60)
    try:
        ring = KeyRing(table, server_key=SERVER_KEY, health=health)

        async def check() -> None:
            with pytest.raises(KeysUnavailable):  # the failed load ...
                await ring.resolve("kgp_" + "z" * 43)
            assert loads == [1] and health.degraded  # ... opened the breaker
            for _ in range(3):
                with pytest.raises(KeysUnavailable):
                    await ring.resolve("kgp_" + "z" * 43)
            assert loads == [1]  # no load while it is open
            assert (await ring.resolve(SERVER_KEY)).right == "admin"  # needs no graph

        asyncio.run(check())
    finally:
        health.close()


def test_the_key_table_is_read_once_per_load_without_retries() -> None:
    """A load is one read without the driver's transaction retries: on a database that is
    gone it fails at once instead of retrying for ``neo4j.retry_s`` (parked in a retry's
    back-off it kept graph keys at 503 for seconds after Neo4j was back)."""
    from kg_platform.errors import GraphError
    from kg_platform.graph.client import GraphClient

    port = free_port()  # nothing listens there
    with (
        driver_retries() as retried,
        GraphClient(f"bolt://127.0.0.1:{port}", ("neo4j", "x"), retry_s=3) as graph,
    ):
        with pytest.raises(GraphError, match="unavailable"):
            KeyStore(graph).active(once=True)
    assert not retried, retried
