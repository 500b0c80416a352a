"""Run records for every ingestion: parser warnings reach the report, the run record and both
outputs of ``kgp ingest``; ``kgp runs list|show`` and ``KnowledgePlatform.runs()/run()`` show
ad-hoc and job runs; a run whose process died is marked ``interrupted`` by the next command that
opens its corpus (not only by the next ingestion of it) and by ``kgp runs list``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from kg_platform.ingest.writer import drop_corpus
from kg_platform.sdk import KnowledgePlatform

pytestmark = pytest.mark.integration

INVALID = "1 invalid byte(s) for encoding utf-8 were replaced by U+FFFD"


def _lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _note_with_a_bad_byte(folder) -> str:
    path = folder / "note.txt"
    path.write_bytes(
        "The platypus lays eggs in Queensland, naïve café über Grüße. ".encode() * 5
        + b"Its bill senses electric fields \xff of prey underwater.\n"
    )
    return str(path)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _fake_dead_run(graph, corpus: str, run_id: str) -> None:
    """What ``kill -9`` of ``kgp ingest`` leaves: a run recorded as running by a dead process."""
    graph.write(
        "ingest/run_start",
        id=run_id,
        corpus=corpus,
        paths=["/nowhere"],
        host=socket.gethostname(),
        pid=_dead_pid(),
    )


@pytest.fixture()
def kp(graph_session, settings, embedder):
    return KnowledgePlatform(settings, graph=graph_session, embedder=embedder)


def test_parser_warnings_reach_the_report_and_the_run_record(kp, tmp_path) -> None:
    drop_corpus(kp.graph, "t-runs-warn")
    uri = _note_with_a_bad_byte(tmp_path)
    report = kp.ingest([uri], "t-runs-warn")
    assert report.status == "completed"
    assert [(w.path, w.warning) for w in report.warnings] == [(uri, INVALID)]
    assert f"warning: {uri}: {INVALID}" in report.summary()
    record = kp.run(report.run_id)
    assert record.status == "completed" and record.job is None
    assert [(w.path, w.warning) for w in record.warnings] == [(uri, INVALID)]
    assert record.counts["added"] == 1


def test_kgp_ingest_prints_warnings_in_text_and_json(cli_env, tmp_path) -> None:
    from kg_platform.cli.main import app

    drop_corpus(cli_env, "t-runs-cli")
    uri = _note_with_a_bad_byte(tmp_path)
    res = CliRunner().invoke(app, ["ingest", uri, "--corpus", "t-runs-cli", "--json"])
    assert res.exit_code == 0, res.output
    events = _lines(res.output)
    assert {"event": "warning", "uri": uri, "warning": INVALID} in events
    report = events[-1]
    assert report["event"] == "report"
    assert report["warnings"] == [{"path": uri, "warning": INVALID}]

    drop_corpus(cli_env, "t-runs-cli")
    res = CliRunner().invoke(app, ["ingest", uri, "--corpus", "t-runs-cli"])
    assert res.exit_code == 0, res.output
    assert f"warning: {uri}: {INVALID}" in res.output


def test_runs_list_and_show_cover_ad_hoc_and_job_runs(cli_env, kp, tmp_path) -> None:
    from kg_platform.cli.main import app

    drop_corpus(cli_env, "t-runs-list")
    ad_hoc = kp.ingest([_note_with_a_bad_byte(tmp_path)], "t-runs-list")
    cli_env.write(
        "jobs/run_failed",
        id="run-job-t-runs-list",
        corpus="t-runs-list",
        job="nightly",
        trigger="schedule",
        host=socket.gethostname(),
        owner="test",
        started="2026-01-01T00:00:00Z",
        errors=json.dumps([{"path": "", "error": "JobError", "reason": "boom", "hint": ""}]),
        duration_s=0.1,
    )
    runs = kp.runs("t-runs-list")
    assert {r.id: r.job for r in runs} == {ad_hoc.run_id: None, "run-job-t-runs-list": "nightly"}
    assert any(r.id == ad_hoc.run_id for r in kp.runs())  # every corpus

    res = CliRunner().invoke(app, ["runs", "list", "--corpus", "t-runs-list", "--json"])
    assert res.exit_code == 0, res.output
    listed = {r["id"]: r for r in json.loads(res.output)}
    assert set(listed) == {ad_hoc.run_id, "run-job-t-runs-list"}
    assert listed[ad_hoc.run_id]["warnings"][0]["warning"] == INVALID
    assert listed["run-job-t-runs-list"]["status"] == "failed"

    res = CliRunner().invoke(app, ["runs", "list", "--corpus", "t-runs-list"])
    assert res.exit_code == 0 and ad_hoc.run_id in res.output and "nightly" in res.output

    res = CliRunner().invoke(app, ["runs", "show", ad_hoc.run_id])
    assert res.exit_code == 0, res.output
    assert ad_hoc.run_id in res.output and INVALID in res.output
    res = CliRunner().invoke(app, ["runs", "show", "run-job-t-runs-list", "--json"])
    shown = json.loads(res.output)
    assert shown["job"] == "nightly" and shown["errors"][0]["reason"] == "boom"

    from kg_platform.ingest.runs import RunNotFound

    with pytest.raises(RunNotFound):
        kp.run("run-that-never-was")


def test_a_dead_run_is_interrupted_by_the_next_command_that_opens_its_corpus(
    kp, settings, graph_session, tmp_path
) -> None:
    drop_corpus(graph_session, "t-runs-dead")
    kp.ingest([_note_with_a_bad_byte(tmp_path)], "t-runs-dead")
    _fake_dead_run(graph_session, "t-runs-dead", "run-dead-search")
    fresh = KnowledgePlatform(settings, graph=graph_session, embedder=kp.embedder)
    fresh.search("platypus", strategy="bm25", corpus="t-runs-dead")
    assert kp.run("run-dead-search").status == "interrupted"


def test_kgp_runs_list_marks_dead_runs_interrupted(cli_env, graph_session) -> None:
    from kg_platform.cli.main import app

    drop_corpus(graph_session, "t-runs-dead-cli")
    _fake_dead_run(graph_session, "t-runs-dead-cli", "run-dead-list")
    res = CliRunner().invoke(app, ["runs", "list", "--json"])
    assert res.exit_code == 0, res.output
    status = {r["id"]: r["status"] for r in json.loads(res.output)}
    assert status["run-dead-list"] == "interrupted"


def test_a_live_run_stays_running(kp, graph_session) -> None:
    drop_corpus(graph_session, "t-runs-live")
    graph_session.write(
        "ingest/run_start",
        id="run-live",
        corpus="t-runs-live",
        paths=[],
        host=socket.gethostname(),
        pid=os.getpid(),
    )
    assert {r.id: r.status for r in kp.runs("t-runs-live")} == {"run-live": "running"}
