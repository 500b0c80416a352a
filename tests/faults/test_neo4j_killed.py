"""Neo4j killed (kill -9 of the server's own pid) while ``kgp ingest`` is about to write and
while ``kgp retrieve`` is about to query, both already connected: each command exits 2 with one
line of reason and a hint (never a traceback) after a bounded number of driver retries, not the
72-100 s of two nested retry loops (F8); after a restart nothing committed before is lost, the
next ingest resumes and converges to a clean ingest of the same files (same sources, sections,
chunks and pieces; piece graph equal to a rebuild), the dead run is recorded as ``interrupted``
and the lock the dead ingest held is taken over at once.

Both commands are held at their fault point (``KGP_FAULT_PAUSE``) while the server dies, so the
kill lands between their connection and their next statement on every run. The test kills only
the suite's spare server (``spare_neo4j``; the session's server is shared by every other test),
by its pid.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from kg_platform._process import pid_alive
from kg_platform.errors import GraphError
from kg_platform.graph import GraphClient
from tests.conftest import DOCUMENTS
from tests.support.driver_log import driver_retries
from tests.faults.helpers import (
    KGP,
    assert_same_edges,
    corpus_shape,
    duplicate_sources,
    kgp_env,
    orphans,
    run_kgp,
    stored_and_rebuilt_edges,
)

pytestmark = [pytest.mark.faults, pytest.mark.integration]

FILES = ["md/docling-wiki-ibm.md", "md/markitdown-README.md"]


@pytest.fixture()
def own_server(spare_neo4j, tmp_path):
    from kg_platform.config import Settings

    server = spare_neo4j
    settings = Settings(
        neo4j={"uri": server.bolt_uri(), "password": server.password()},
        data_dir=tmp_path / "kgp-data",
    )
    return server, settings


def _wait_reached(gate, procs: list[subprocess.Popen]) -> None:
    while not gate.with_name(gate.name + ".reached").exists():
        for proc in procs:
            assert proc.poll() is None, proc.stderr.read()[-3000:]
        time.sleep(0.1)


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "neo4j.io" not in stderr and "will be retried" not in stderr, stderr[-3000:]


def test_neo4j_killed_mid_ingest_and_mid_query_then_restart_converges(
    own_server, embedder, tmp_path
):
    from kg_platform.graph.schema import apply_migrations
    from kg_platform.ingest import ingest_paths

    server, settings = own_server
    folder = tmp_path / "docs"
    folder.mkdir()
    for rel in FILES:
        shutil.copy(DOCUMENTS / rel, folder)
    with GraphClient.from_settings(settings) as graph:
        apply_migrations(graph, embedder.dimension, embedder.model_name)
        clean = ingest_paths(graph, settings, [folder], "clean", embedder=embedder)
        assert clean.status == "completed", clean.errors
        clean_shape = corpus_shape(graph, "clean")

    env = kgp_env(settings)
    gate = tmp_path / "gate"
    ingest = subprocess.Popen(
        [str(KGP), "ingest", str(folder), "--corpus", "t", "--json"],
        env={**env, "KGP_FAULT_PAUSE": f"write:1:{gate}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    query_gate = tmp_path / "qgate"
    query = subprocess.Popen(
        [
            str(KGP),
            "retrieve",
            "What did IBM build?",
            "--corpus",
            "clean",
            "--strategy",
            "hybrid",
            "--scope",
            "docling-wiki-ibm",
            "--json",
        ],
        env={**env, "KGP_FAULT_PAUSE": f"retrieve:1:{query_gate}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # a third client, in this process, counts the driver's retries on a dead pooled connection
    watcher = GraphClient.from_settings(settings)
    watcher.read_raw("RETURN 1")
    try:
        _wait_reached(gate, [ingest, query])
        _wait_reached(query_gate, [ingest, query])
        pid = server.status().pid
        assert pid
        os.kill(pid, signal.SIGKILL)  # this test's own server, by its pid
        while pid_alive(pid):
            time.sleep(0.1)
    finally:
        gate.touch()
        query_gate.touch()
    out, err = ingest.communicate(timeout=600)
    qout, qerr = query.communicate(timeout=600)

    assert ingest.returncode == 2, (ingest.returncode, err[-3000:])
    _no_traceback(err)
    report = json.loads(out.strip().splitlines()[-1])
    assert report["status"] == "failed"
    reason = report["fatal"].split("\n  hint:")[0]
    assert "\n" not in reason and "unavailable" in reason.lower(), report["fatal"]
    # what stderr says: the failure (reason + hint), that the run is not recorded, that the lock
    # is left to the next run; no retry of the clean-up against the dead server
    errors = [ln for ln in err.splitlines() if ln.startswith(("ERROR", "error:"))]
    assert len(errors) == 1 and "unavailable" in errors[0], err[-3000:]
    assert "is not recorded" in err and "could not record" not in err, err[-3000:]

    assert query.returncode == 2, (query.returncode, qerr[-3000:])
    _no_traceback(qerr)
    lines = [ln for ln in qerr.splitlines() if ln.strip()]
    assert len(lines) == 2 and lines[0].startswith("error:"), qerr[-3000:]
    assert "unavailable" in lines[0].lower() and "hint:" in lines[1] and qout.strip() == ""
    # the driver gives up after a bounded number of retries (F8: two nested loops took 72-100 s)
    try:
        with driver_retries() as retried, pytest.raises(GraphError, match="unavailable"):
            watcher.read_raw("RETURN 1")
    finally:
        watcher.close()
    assert 1 <= len(retried) <= 8, retried

    server.start()  # recovery from the kill on restart
    resumed = run_kgp(["ingest", str(folder), "--corpus", "t", "--json"], env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = run_kgp(
        [
            "retrieve",
            "What did IBM build?",
            "--corpus",
            "clean",
            "--strategy",
            "hybrid",
            "--scope",
            "docling-wiki-ibm",
            "--json",
        ],
        env,
    )
    assert again.returncode == 0 and json.loads(again.stdout)["items"], again.stderr[-3000:]

    with GraphClient.from_settings(settings) as graph:
        assert corpus_shape(graph, "clean") == clean_shape  # nothing committed was lost
        assert corpus_shape(graph, "t") == clean_shape  # converged to a clean ingest
        assert duplicate_sources(graph, "t") == [] and orphans(graph) == {}
        runs = graph.read_raw(
            "MATCH (r:IngestRun {corpus: 't'}) RETURN r.status AS s ORDER BY r.started",
        )
        assert [r["s"] for r in runs] == ["interrupted", "completed"], runs
        # the dead run's corpus lock did not make the resumed run wait: taken over (its pid is
        # gone) or already expired, whichever came first on a slow restart; released after
        lock = graph.read_raw(
            "MATCH (l:JobLock {name: 'ingest:t'}) RETURN l.owner AS o, l.reclaimed_from AS r"
        )[0]
        assert lock["o"] is None and (lock["r"] is None or f":{ingest.pid}:" in lock["r"])
        assert "being written by another run" not in resumed.stderr, resumed.stderr[-2000:]
        assert_same_edges(*stored_and_rebuilt_edges(graph, settings, "t"))
