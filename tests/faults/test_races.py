"""Races decided by the lock: a locked ``kgp jobs run --json`` says so on stdout (F8) and exits 3,
and leaves no run behind."""

from __future__ import annotations

import json

import pytest

from kg_platform.jobs import JobLock
from tests.faults.helpers import kgp_env, run_kgp

pytestmark = [pytest.mark.faults, pytest.mark.integration]


def test_locked_job_run_prints_a_json_object_and_exits_3(graph_session, settings, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nThe lock decides. Only one runs.\n")
    (tmp_path / "race.toml").write_text(
        'name = "race"\ncorpus = "t-race"\n[sources]\npaths = ["docs"]\n'
    )
    before = graph_session.read_raw("MATCH (r:IngestRun {corpus: 't-race'}) RETURN count(r) AS n")
    with JobLock(graph_session, "race", lease_s=120):
        res = run_kgp(["jobs", "run", "race", "--dir", str(tmp_path), "--json"], kgp_env(settings))
    assert res.returncode == 3, res.stderr[-2000:]
    payload = json.loads(res.stdout.strip().splitlines()[-1])
    assert payload["status"] == "locked" and payload["job"] == "race"
    assert "already running" in payload["reason"]
    after = graph_session.read_raw("MATCH (r:IngestRun {corpus: 't-race'}) RETURN count(r) AS n")
    assert after == before
