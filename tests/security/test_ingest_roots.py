"""Issue 54, High: ``POST /v1/ingest`` read any file the server's user could read. Now: no
ingest roots, no ingestion by path; with roots, a path outside them (``/etc/passwd``, ``../``,
a link leading out, ``DATA_DIR``) gets the same answer as a missing file; a folder holding such
links ingests only its own files (the walk is checked by the ingestion itself); answers show
paths relative to their root; and a run started on one server is seen and cancelled from a
second server on the same Neo4j, leaving only whole sources.

Each server here is a real uvicorn over its own platform object (own driver) on the test Neo4j.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_platform import _faults
from kg_platform.config import ServeSettings
from kg_platform.ingest.roots import PathGuard
from kg_platform.sdk import KnowledgePlatform
from tests.support.http_api import api_client, problem, wait_run

pytestmark = pytest.mark.integration

KEY = "test-key-security-ingest-roots-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
SECRET = "SECRET-API-KEY-must-never-reach-the-graph"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A data_dir holding a key file, an ingest root with a folder of own files and links
    leading out of the root, and a file next to (outside) the root."""
    base = tmp_path_factory.mktemp("roots")
    holder = base / "holder"  # a second root: data_dir lies under it and is refused anyway
    data_dir = holder / "kgp-data"
    (data_dir / "serve").mkdir(parents=True)
    key_file = data_dir / "serve" / "api-key"
    key_file.write_text(f"{SECRET}\n")
    root = base / "root"
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "own.md").write_text("# Own\n\nThe ostrich lays the largest eggs of any bird.\n")
    (docs / "key.txt").symlink_to(key_file)
    (docs / "pw.md").symlink_to("/etc/passwd")
    (docs / "data").symlink_to(data_dir, target_is_directory=True)
    (root / "key-link.txt").symlink_to(key_file)
    (base / "outside.md").write_text("# Outside\n\nNot under the root.\n")
    return {
        "base": base,
        "holder": holder,
        "data_dir": data_dir,
        "root": root,
        "docs": docs,
        "key": key_file,
    }


def _served(settings, data_dir: Path, **serve):
    return settings.model_copy(
        update={
            "data_dir": data_dir,
            "serve": ServeSettings(rate_per_s=100, rate_burst=400, **serve),
        }
    )


@contextlib.contextmanager
def _held_at(monkeypatch, point: str, gate: Path) -> Iterator[None]:
    """Ingestion in this process pauses at fault point ``point`` (``phase:n``) until ``gate``
    exists; the gate is opened on the way out, whatever happened."""
    _faults._counts.clear()
    monkeypatch.setenv("KGP_FAULT_PAUSE", f"{point}:{gate}")
    try:
        yield
    finally:
        gate.touch()
        monkeypatch.delenv("KGP_FAULT_PAUSE")
        _faults._counts.clear()


def _start_held(client, folder: str, corpus: str, gate: Path) -> str:
    """``POST /v1/ingest`` of ``folder``; the run's id once the run holds at its fault gate."""
    started = client.post("/v1/ingest", json={"paths": [folder], "corpus": corpus}, headers=AUTH)
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    assert run_id, started.json()
    deadline = time.monotonic() + 300
    while not Path(f"{gate}.reached").exists():
        assert time.monotonic() < deadline, client.get(f"/v1/runs/{run_id}", headers=AUTH).text
        time.sleep(0.05)
    return str(run_id)


@pytest.fixture(scope="module")
def api(settings, embedder, graph_session, tree):
    """A server whose one root is ``root``, plus (to show data_dir is refused even under a
    root) the folder holding data_dir."""
    served = _served(settings, tree["data_dir"], ingest_roots=[tree["root"], tree["holder"]])
    with api_client(served, embedder, KEY) as client:
        yield client


def test_without_ingest_roots_every_path_is_refused(settings, embedder, tree) -> None:
    served = _served(settings, tree["data_dir"])
    with api_client(served, embedder, KEY, timeout=60) as client:
        for path in [str(tree["docs"]), str(tree["docs"] / "own.md"), "/etc/passwd", "nothing"]:
            body = problem(client.post("/v1/ingest", json={"paths": [path]}, headers=AUTH), 403)
            assert "serve.ingest_roots" in body["detail"], body
            assert "upload" in body["hint"]


def test_paths_outside_the_roots_get_the_same_answer_as_a_missing_file(api, tree) -> None:
    root = tree["root"]
    missing = str(root / "docs" / "no-such-file.md")
    outside = [
        "/etc/passwd",
        "../outside.md",  # relative to the first root: base/outside.md, which exists
        str(root / "docs" / ".." / ".." / "outside.md"),
        str(root / "key-link.txt"),  # a link inside the root to DATA_DIR/serve/api-key
        str(tree["data_dir"]),  # under the second root, and refused all the same
        str(tree["key"]),
        str(tree["docs"] / "data"),  # a link to data_dir
    ]
    assert all(os.path.exists(p if p.startswith("/") else root / p) for p in outside)

    def answer(path: str) -> tuple[int, dict]:
        response = api.post("/v1/ingest", json={"paths": [path]}, headers=AUTH)
        body = problem(response, 422)
        assert repr(path) in body["detail"], body
        shape = dict(body, detail=body["detail"].replace(repr(path), "<path>"))
        shape.pop("request_id", None)  # every answer has its own
        return response.status_code, shape

    expected = answer(missing)
    for path in outside:
        assert answer(path) == expected, path
    # the allowed sibling of those answers is accepted (relative paths: to the first root)
    started = api.post(
        "/v1/ingest", json={"paths": ["docs/own.md"], "corpus": "roots-one"}, headers=AUTH
    )
    assert started.status_code == 202, started.text
    assert wait_run(api, started.json()["task_id"], AUTH)["status"] == "completed"


def test_a_folder_holding_links_out_ingests_only_its_own_files(api, tree) -> None:
    corpus = "roots-folder"
    started = api.post(
        "/v1/ingest", json={"paths": [str(tree["docs"])], "corpus": corpus}, headers=AUTH
    )
    assert started.status_code == 202, started.text
    run = wait_run(api, started.json()["task_id"], AUTH)
    assert run["status"] == "completed", run
    # answers name the file relative to its root, never the server's path
    assert run["report"]["added"] == ["docs/own.md"], run["report"]
    assert run["paths"] == ["docs"], run
    assert str(tree["base"]) not in str(run)
    corpora = {c["name"]: c for c in api.get("/v1/corpora", headers=AUTH).json()["corpora"]}
    assert corpora[corpus]["sources"] == 1
    found = api.post(
        "/v1/search", json={"query": SECRET, "corpus": corpus, "k": 5}, headers=AUTH
    ).json()["items"]
    assert found and all(SECRET not in it["text"] for it in found)
    assert {it["source_uri"] for it in found} == {"docs/own.md"}
    recorded = api.get("/v1/runs", params={"corpus": corpus}, headers=AUTH).json()["runs"]
    assert recorded and str(tree["base"]) not in str(recorded)


def test_the_walk_is_checked_by_the_ingestion_itself(
    settings, embedder, graph_session, tree
) -> None:
    """The SDK given a guard (what the server passes) skips the links while it walks, so a
    path swapped for a link after the request's check cannot leak either."""
    platform = KnowledgePlatform(settings, graph=graph_session, embedder=embedder)
    guard = PathGuard([tree["root"]], [tree["data_dir"]])
    report = platform.ingest([tree["docs"]], corpus="roots-sdk", guard=guard)
    assert [Path(u).name for u in report.added] == ["own.md"], report.summary()
    refused = platform.ingest([tree["root"] / "key-link.txt"], corpus="roots-sdk", guard=guard)
    assert not refused.added and len(refused.errors) == 1
    assert "no such file or folder under the ingest roots" in refused.errors[0].reason
    assert str(tree["key"]) not in refused.errors[0].reason
    # without a guard (a local `kgp ingest`) the user reads what they can read
    free = platform.ingest([tree["docs"]], corpus="roots-sdk-local")
    assert {"own.md", "pw.md", "key.txt"} <= {Path(u).name for u in free.added}, free.summary()


def test_a_run_is_seen_and_cancelled_from_a_second_server(
    settings, embedder, graph_session, tree, tmp_path, monkeypatch
) -> None:
    folder = tree["root"] / "many"
    folder.mkdir()
    for i in range(6):
        (folder / f"f{i}.md").write_text(
            f"# Note {i}\n\nThe lighthouse keeper number {i} logs the ships at dawn. "
            "Every entry names the ship, its flag and its cargo.\n"
        )
    ref = KnowledgePlatform(settings, graph=graph_session, embedder=embedder).ingest(
        [folder / "f0.md"], corpus="cancel-ref"
    )
    per_source = ref.counts["chunks"]
    assert ref.status == "completed" and per_source > 0

    served = _served(settings, tree["data_dir"], ingest_roots=[tree["root"]])
    one_per_batch = served.model_copy(
        update={"ingest": served.ingest.model_copy(update={"transaction_rows": 1})}
    )
    gate = tmp_path / "gate"
    corpus = "cancel-me"
    with (
        api_client(one_per_batch, embedder, KEY) as a,
        api_client(served, embedder, KEY) as b,
        _held_at(monkeypatch, "parse:3", gate),
    ):
        run_id = _start_held(a, "many", corpus, gate)  # held in its third file
        listed = b.get("/v1/runs", params={"corpus": corpus}, headers=AUTH).json()["runs"]
        assert [(r["id"], r["status"]) for r in listed] == [(run_id, "running")], listed
        asked = b.delete(f"/v1/runs/{run_id}", headers=AUTH)
        assert asked.status_code == 202, asked.text
        assert asked.json()["cancel_requested"] is True
        time.sleep(0.6)  # past the run's poll interval
        gate.touch()
        run = wait_run(b, run_id, AUTH)
        assert run["status"] == "cancelled", run
        assert wait_run(a, run_id, AUTH)["status"] == "cancelled"
        # an ended run cannot be cancelled again
        problem(b.delete(f"/v1/runs/{run_id}", headers=AUTH), 409)
        problem(b.delete("/v1/runs/run-00000000T000000-deadbeef", headers=AUTH), 404)
    # only whole sources: each one written has all its chunks; not every file was written
    rows = graph_session.read_raw(
        "MATCH (s:Source {corpus: $corpus}) OPTIONAL MATCH (c:Chunk {source_id: s.id}) "
        "RETURN s.uri AS uri, count(c) AS n",
        corpus=corpus,
    )
    assert len(rows) < 6, rows
    assert all(r["n"] == per_source for r in rows), rows


def test_a_run_answers_before_its_walk_and_is_cancelled_while_listing(
    settings, embedder, graph_session, tree, tmp_path, monkeypatch
) -> None:
    """Finding: one request for ``/usr`` held the request and the only ingest worker while the
    tree was listed, with no way to cancel it. The run is recorded before the walk: the request
    answers 202 with the run's id while the walk is held at its second folder, and a cancel asked
    then stops the walk: the run ends ``cancelled`` with nothing written."""
    big = tree["root"] / "big"
    for i in range(3):
        (big / f"d{i}").mkdir(parents=True)
        (big / f"d{i}" / "note.md").write_text(f"# Note {i}\n\nThe heron waits in pool {i}.\n")
    served = _served(settings, tree["data_dir"], ingest_roots=[tree["root"]])
    gate = tmp_path / "walk-gate"
    corpus = "walk-cancel"
    with api_client(served, embedder, KEY) as client, _held_at(monkeypatch, "walk:2", gate):
        # answered before the walk ended (it cannot end before the gate opens)
        run_id = _start_held(client, "big", corpus, gate)  # held at its second folder
        listed = client.get(f"/v1/runs/{run_id}", headers=AUTH).json()
        assert listed["status"] == "running", listed
        asked = client.delete(f"/v1/runs/{run_id}", headers=AUTH)
        assert asked.status_code == 202, asked.text
        time.sleep(0.6)  # past the run's poll interval
        gate.touch()
        run = wait_run(client, run_id, AUTH)
        assert run["status"] == "cancelled", run
    rows = graph_session.read_raw(
        "MATCH (s:Source {corpus: $corpus}) RETURN count(s) AS n", corpus=corpus
    )
    assert rows[0]["n"] == 0, rows


def test_an_mcp_cancel_stops_a_live_run_of_another_server(
    settings, embedder, graph_session, tree, tmp_path, monkeypatch
) -> None:
    """``cancel_run`` over MCP (its own Service and platform, as ``kgp mcp`` has) stops a run
    that an HTTP server started and is writing: the run ends ``cancelled``."""
    import asyncio

    from mcp.client import Client

    from kg_platform.serve.mcp_server import build_mcp
    from kg_platform.serve.principal import LOCAL, McpPrincipal
    from kg_platform.serve.service import Service

    folder = tree["root"] / "mcp-many"
    folder.mkdir()
    for i in range(4):
        (folder / f"m{i}.md").write_text(f"# Tide {i}\n\nThe tide table {i} lists the ebb.\n")
    served = _served(settings, tree["data_dir"], ingest_roots=[tree["root"]])
    mcp_service = Service(KnowledgePlatform(served, embedder=embedder))
    mcp = build_mcp(mcp_service)
    mcp.middleware.insert(0, McpPrincipal(local=LOCAL))  # as over stdio: the local client

    async def cancel(run_id: str) -> tuple[bool, str]:
        async with Client(mcp) as client:
            result = await client.call_tool("cancel_run", {"run_id": run_id})
        return result.is_error, " ".join(getattr(c, "text", "") for c in result.content)

    gate = tmp_path / "mcp-gate"
    corpus = "mcp-cancel-me"
    try:
        with api_client(served, embedder, KEY) as client, _held_at(monkeypatch, "parse:2", gate):
            run_id = _start_held(client, "mcp-many", corpus, gate)  # held in its second file
            error, text = asyncio.run(cancel(run_id))
            assert not error and "cancel_requested" in text, text
            time.sleep(0.6)  # past the run's poll interval
            gate.touch()
            assert wait_run(client, run_id, AUTH)["status"] == "cancelled"
            error, text = asyncio.run(cancel(run_id))  # an ended run: a tool error, not a crash
            assert error and "ended" in text.lower(), text
    finally:
        mcp_service.close()
