"""Ingestion jobs against the real Neo4j: a spec runs end to end and leaves an (:IngestRun); the
Neo4j lock admits one holder across OS processes; the scheduler survives a failing source, skips
a job locked by another process, and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from kg_platform.jobs import JobLock, find_spec, lock_states, run_job

pytestmark = pytest.mark.integration

GOOD_DOC = """# Harbour cranes

Ship-to-shore cranes move containers between vessels and the quay. A crane driver sits in a cab
that travels along the boom.

## Maintenance

Wire ropes are inspected every week. Worn sheaves are replaced before the winter storms.
"""


def _make_job(
    folder: Path,
    name: str,
    corpus: str,
    *,
    schedule: str | None = None,
    keep_runs: int = 10,
    extra: str = "",
) -> Path:
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "cranes.md").write_text(GOOD_DOC, encoding="utf-8")
    (docs / "broken.docx").write_bytes(b"this is not a zip archive at all")  # a failing source
    sched = f'schedule = "{schedule}"\n' if schedule else ""
    spec = folder / f"{name}.toml"
    spec.write_text(
        f'name = "{name}"\ncorpus = "{corpus}"\n{sched}'
        f'[sources]\npaths = ["docs", "no-such-folder"]\n'
        f"[retention]\nkeep_runs = {keep_runs}\n{extra}",
        encoding="utf-8",
    )
    return spec


def _env(neo4j_server: dict) -> dict[str, str]:
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_server["uri"],
        "NEO4J_PASSWORD": neo4j_server["password"],
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("KGP_CONFIG", None)
    return env


def test_job_spec_runs_end_to_end(graph_session, settings, embedder, tmp_path) -> None:
    _make_job(tmp_path, "jobs-e2e", "jobs-e2e", keep_runs=1)
    spec = find_spec(tmp_path, "jobs-e2e")

    first = run_job(spec, graph_session, settings, embedder=embedder)
    assert first.status == "completed_with_errors"
    assert first.exit_code == 1
    failed = {Path(e.path).name for e in first.report.errors}
    assert failed == {"broken.docx", "no-such-folder"}

    run = graph_session.read_raw(
        "MATCH (r:IngestRun {id: $id}) RETURN r.job AS job, r.status AS status, "
        "r.counts AS counts, r.errors AS errors, r.tokens AS tokens, r.duration_s AS d, "
        "r.job_duration_s AS jd, r.trigger AS trigger",
        id=first.run_id,
    )[0]
    assert run["job"] == "jobs-e2e" and run["status"] == "completed_with_errors"
    assert json.loads(run["counts"])["added"] == 1
    assert {Path(e["path"]).name for e in json.loads(run["errors"])} == failed
    assert run["tokens"] > 0 and run["d"] > 0 and run["jd"] >= run["d"]
    assert run["trigger"] == "manual"
    chunks = graph_session.read_raw("MATCH (c:Chunk {corpus: 'jobs-e2e'}) RETURN count(c) AS n")[0][
        "n"
    ]
    assert chunks > 0
    assert not lock_states(graph_session, ["jobs-e2e"])["jobs-e2e"].held

    second = run_job(spec, graph_session, settings, embedder=embedder)
    assert second.report.skipped and not second.report.added  # unchanged source
    runs = graph_session.read("jobs/history", job="jobs-e2e", limit=10)
    assert [r["id"] for r in runs] == [second.run_id]  # retention keep_runs = 1


_CONTENDER = textwrap.dedent("""
    import sys, time
    from kg_platform.graph import GraphClient
    from kg_platform.graph.lock import JobLock
    uri, pw, name, lease, start_at, hold = sys.argv[1:7]
    with GraphClient(uri, ("neo4j", pw)) as graph:
        lock = JobLock(graph, name, lease_s=float(lease))
        while time.time() < float(start_at):
            time.sleep(0.005)
        won = lock.acquire()
        print("WON" if won else "BUSY", lock.owner, flush=True)
        if won:
            time.sleep(float(hold))
            lock.release()
""")


def _contenders(
    neo4j_server: dict, name: str, n: int, *, lease: float, hold: float, tmp_path: Path
) -> list[subprocess.Popen]:
    script = tmp_path / "contender.py"
    script.write_text(_CONTENDER)
    start_at = time.time() + 6  # both processes import first, then race
    return [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                neo4j_server["uri"],
                neo4j_server["password"],
                name,
                str(lease),
                str(start_at),
                str(hold),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=_env(neo4j_server),
        )
        for _ in range(n)
    ]


def test_lock_admits_one_process(graph_session, neo4j_server, tmp_path) -> None:
    procs = _contenders(neo4j_server, "race", 2, lease=3, hold=6, tmp_path=tmp_path)
    outs = [p.communicate(timeout=60)[0].split()[0] for p in procs]
    assert sorted(outs) == ["BUSY", "WON"], outs
    assert all(p.returncode == 0 for p in procs)
    # The winner held it for 6 s with a 3 s lease: renewal kept it; now it is released.
    state = lock_states(graph_session, ["race"])["race"]
    assert not state.held
    with JobLock(graph_session, "race", lease_s=5):
        assert lock_states(graph_session, ["race"])["race"].held


def test_crashed_holder_is_taken_over_here_and_expires_elsewhere(
    graph_session, neo4j_server, tmp_path
) -> None:
    proc = _contenders(neo4j_server, "crash", 1, lease=60, hold=600, tmp_path=tmp_path)[0]
    assert proc.stdout.readline().startswith("WON")
    proc.kill()  # no release, no renewal
    proc.wait(timeout=10)
    mine = JobLock(graph_session, "crash", lease_s=5)
    assert mine.acquire()  # its pid is gone on this host: taken over, lease or not
    mine.release()
    # a holder on another host cannot be judged by pid: only its lease frees the lock
    remote = JobLock(graph_session, "crash-remote", lease_s=2, owner="elsewhere:1:abcd")
    assert remote.acquire()
    remote._stop.set()  # dies without a release
    mine = JobLock(graph_session, "crash-remote", lease_s=5)
    assert not mine.acquire()  # lease still running
    time.sleep(2.5)
    assert mine.acquire()  # expired: ours now
    mine.release()


class _Lines:
    """JSON event lines of a subprocess, read on a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.events: list[dict] = []
        self._q: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()

    def _pump(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            try:
                self._q.put(json.loads(line))
            except ValueError:
                continue

    def wait_for(self, pred, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                ev = self._q.get(timeout=0.5)
            except queue.Empty:
                continue
            self.events.append(ev)
            if pred(ev):
                return ev
        raise AssertionError(f"event not seen in {timeout}s; saw {self.events}")


@pytest.mark.slow
def test_scheduler_survives_failures_skips_locked_jobs_and_stops_on_sigterm(
    graph_session, neo4j_server, tmp_path
) -> None:
    _make_job(tmp_path, "flaky", "jobs-flaky", schedule="*/3 * * * * *")
    _make_job(tmp_path, "held", "jobs-held", schedule="*/3 * * * * *")
    other_process_lock = JobLock(graph_session, "held", lease_s=30)
    assert other_process_lock.acquire()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kg_platform.cli.main",
            "jobs",
            "schedule",
            "--dir",
            str(tmp_path),
            "--grace",
            "60",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(neo4j_server) | {"KGP_TUNING__JOBS__LEASE_S": "20"},
    )
    lines = _Lines(proc)
    try:
        lines.wait_for(lambda e: e["event"] == "started", 120)
        lines.wait_for(lambda e: e["event"] == "skipped" and e["job"] == "held", 120)
        # Two runs of the flaky job, both "completed with errors": the scheduler keeps going.
        for _ in range(2):
            done = lines.wait_for(lambda e: e["event"] == "finished" and e["job"] == "flaky", 240)
            assert done["status"] == "completed_with_errors" and done["errors"] == 2
        assert not any(e.get("job") == "held" and e["event"] == "finished" for e in lines.events)
        proc.send_signal(signal.SIGTERM)
        stopped = lines.wait_for(lambda e: e["event"] == "stopped", 90)
        assert stopped["unfinished"] == []
        assert proc.wait(timeout=30) == 0
    finally:
        other_process_lock.release()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    runs = graph_session.read("jobs/history", job="flaky", limit=50)
    assert len(runs) >= 2 and {r["status"] for r in runs} == {"completed_with_errors"}
    assert {r["trigger"] for r in runs} == {"schedule"}
    assert graph_session.read("jobs/history", job="held", limit=5) == []
    assert not lock_states(graph_session, ["flaky"])["flaky"].held
