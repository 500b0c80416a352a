"""Scheduler set-up without a database: which jobs get triggers, and clear errors otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_platform.config import Settings
from kg_platform.errors import JobError
from kg_platform.jobs.scheduler import JobScheduler


def _spec(folder: Path, name: str, schedule: str | None, enabled: bool = True) -> None:
    sched = f'schedule = "{schedule}"\n' if schedule else ""
    (folder / f"{name}.toml").write_text(
        f'name = "{name}"\ncorpus = "c"\n{sched}enabled = {str(enabled).lower()}\n'
        '[sources]\npaths = ["d"]\n'
    )


def test_only_enabled_scheduled_jobs_get_cron_triggers(tmp_path: Path) -> None:
    _spec(tmp_path, "hourly", "0 * * * *")
    _spec(tmp_path, "manual", None)
    _spec(tmp_path, "off", "0 * * * *", enabled=False)
    scheduler, names = JobScheduler(Settings(), tmp_path)._build()
    assert names == ["hourly"]
    job = scheduler.get_job("hourly")
    assert job.max_instances == 1 and job.coalesce is True


def test_run_now_adds_a_one_off_run_per_job(tmp_path: Path) -> None:
    _spec(tmp_path, "manual", None)
    scheduler, names = JobScheduler(Settings(), tmp_path, run_now=True)._build()
    assert names == ["manual"] and scheduler.get_job("manual-now") is not None


def test_nothing_to_schedule_and_unknown_names_are_errors(tmp_path: Path) -> None:
    _spec(tmp_path, "manual", None)
    with pytest.raises(JobError, match="no scheduled jobs"):
        JobScheduler(Settings(), tmp_path)._build()
    _spec(tmp_path, "hourly", "0 * * * *")
    with pytest.raises(JobError, match="no job named nope"):
        JobScheduler(Settings(), tmp_path, only=["nope"])._build()
