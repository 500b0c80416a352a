"""The deployment examples in ingestion/deploy/ all run `kgp jobs run NAME` for real job specs,
and the Kubernetes manifest is a valid CronJob that forbids overlapping runs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from kg_platform.jobs import load_specs

INGESTION = Path(__file__).resolve().parents[2] / "ingestion"
DEPLOY = INGESTION / "deploy"


def _job_names() -> set[str]:
    return {s.name for s in load_specs(INGESTION)}


def test_cron_lines_run_known_jobs() -> None:
    lines = [
        ln
        for ln in (DEPLOY / "cron" / "kgp-jobs.crontab").read_text().splitlines()
        if ln.strip() and not ln.startswith("#") and "=" not in ln.split()[0]
    ]
    jobs = {re.search(r"kgp jobs run (\S+)", ln).group(1) for ln in lines}
    assert jobs and jobs <= _job_names()
    for ln in lines:
        assert len(ln.split()) > 5  # 5 time fields + command


def test_systemd_units_run_the_instance_job() -> None:
    service = (DEPLOY / "systemd" / "kgp-job@.service").read_text()
    assert re.search(r"^ExecStart=\S*kgp jobs run %i", service, re.M)
    assert "SuccessExitStatus=1 3" in service
    timer = (DEPLOY / "systemd" / "kgp-job@.timer").read_text()
    assert "Unit=kgp-job@%i.service" in timer and "OnCalendar=" in timer
    assert "kgp jobs schedule" in (DEPLOY / "systemd" / "kgp-scheduler.service").read_text()


def test_kubernetes_cronjob_runs_a_known_job_without_overlap() -> None:
    doc = yaml.safe_load((DEPLOY / "kubernetes" / "cronjob.yaml").read_text())
    assert doc["kind"] == "CronJob" and doc["apiVersion"] == "batch/v1"
    spec = doc["spec"]
    assert spec["concurrencyPolicy"] == "Forbid"
    container = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:3] == ["kgp", "jobs", "run"]
    assert container["args"][3] in _job_names()
    specs = {s.name: s for s in load_specs(INGESTION)}
    assert spec["schedule"] == specs[container["args"][3]].schedule
