"""``kgp jobs schedule``: a long-lived process that fires due ingestion jobs.

APScheduler 3 (pinned below 4) owns the clock: one cron trigger per enabled job spec,
``max_instances=1`` and ``coalesce=True`` inside the process, and the Neo4j :class:`JobLock`
across processes and machines, so two schedulers (or a scheduler and a cron-driven
``kgp jobs run``) never ingest the same job at once. A failing job is recorded as a failed run
and logged; the scheduler keeps going. SIGTERM/SIGINT stop new fires, wait up to ``grace_s`` for
the running job to finish (its lock is released normally), then exit 0.

Events are printed as one JSON object per line (``{"event": "fired", "job": ...}``), the format
log collectors (journald, Kubernetes) handle best.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kg_platform.config import Settings
from kg_platform.errors import JobError, JobLocked
from kg_platform.jobs.spec import load_specs

if TYPE_CHECKING:
    from kg_platform.jobs.runner import JobRunResult, Trigger

log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]


class JobRunner(Protocol):
    """What the scheduler needs to run a job: :class:`kg_platform.KnowledgePlatform` is one.

    The scheduler sits below the SDK, so it is handed the platform instead of building one.
    """

    def run_job(
        self, job: str, directory: Path | None = None, *, trigger: "Trigger" = "manual"
    ) -> "JobRunResult": ...


def json_emit(event: dict[str, Any]) -> None:
    print(
        json.dumps(
            {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **event}, default=str
        ),
        flush=True,
    )


class JobScheduler:
    """Fires the jobs of ``directory`` on their cron schedules until :meth:`stop` is called."""

    def __init__(
        self,
        settings: Settings,
        directory: Path,
        *,
        platform: JobRunner | None = None,
        emit: Emit = json_emit,
        only: list[str] | None = None,
        run_now: bool = False,
    ) -> None:
        self.settings = settings
        self.directory = directory
        self.emit = emit
        self.only = set(only or [])
        self.run_now = run_now
        self._platform = platform
        self._stopping = threading.Event()
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self.fired = 0
        self.failures = 0

    # ------------------------------------------------------------------ parts
    @property
    def platform(self) -> JobRunner:
        """The front door every run goes through (one graph client and one embedder, shared)."""
        if self._platform is None:
            raise JobError(
                "the scheduler has no platform to run jobs with",
                hint="JobScheduler(settings, directory, platform=KnowledgePlatform(settings))",
            )
        return self._platform

    # -------------------------------------------------------------- one fire
    def fire(self, name: str, trigger: str = "schedule") -> None:
        """Run one job now; never raises (a failed job must not stop the scheduler)."""
        if self._stopping.is_set():
            return
        with self._lock:
            self._running.add(name)
        self.fired += 1
        started = time.perf_counter()
        self.emit({"event": "fired", "job": name})
        try:
            # Re-read the spec so edits apply without restarting the scheduler.
            result = self.platform.run_job(name, self.directory, trigger=trigger)  # type: ignore[arg-type]
            if result.status != "completed":
                self.failures += 1
            self.emit(
                {
                    "event": "finished",
                    "job": name,
                    "run_id": result.run_id,
                    "status": result.status,
                    "duration_s": result.duration_s,
                    "errors": len(result.errors)
                    + (len(result.report.errors) if result.report else 0),
                }
            )
        except JobLocked as exc:
            self.emit(
                {
                    "event": "skipped",
                    "job": name,
                    "reason": "locked",
                    "detail": str(exc).splitlines()[0],
                }
            )
        except Exception as exc:  # noqa: BLE001 - logged; the scheduler goes on
            self.failures += 1
            self.emit(
                {
                    "event": "error",
                    "job": name,
                    "error": type(exc).__name__,
                    "detail": str(exc),
                    "duration_s": round(time.perf_counter() - started, 3),
                }
            )
        finally:
            with self._lock:
                self._running.discard(name)

    # ------------------------------------------------------------------ loop
    def _build(self) -> Any:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        specs = [
            s
            for s in load_specs(self.directory)
            if s.enabled and (not self.only or s.name in self.only)
        ]
        unknown = self.only - {s.name for s in load_specs(self.directory)}
        if unknown:
            raise JobError(
                f"no job named {', '.join(sorted(unknown))} in {self.directory}",
                hint="`kgp jobs list` shows the jobs",
            )
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(4)}, timezone="UTC"
        )
        scheduled = []
        for spec in specs:
            trigger = spec.trigger()
            if trigger is None and not self.run_now:
                continue
            if trigger is not None:
                scheduler.add_job(
                    self.fire,
                    trigger=trigger,
                    args=[spec.name],
                    id=spec.name,
                    name=spec.name,
                    max_instances=1,
                    coalesce=True,
                    misfire_grace_time=self.settings.tuning.jobs.misfire_grace_s,
                )
            scheduled.append(spec.name)
            if self.run_now:
                scheduler.add_job(
                    self.fire, args=[spec.name, "manual"], id=f"{spec.name}-now", max_instances=1
                )
        if not scheduled:
            raise JobError(
                f"no scheduled jobs in {self.directory.resolve()}",
                hint='give a job spec a `schedule = "<cron>"`, or use '
                "`kgp jobs run NAME` for manual jobs",
            )
        return scheduler, scheduled

    def run(
        self,
        *,
        grace_s: float = 60.0,
        install_signals: bool = True,
        max_seconds: float | None = None,
    ) -> int:
        """Block until SIGTERM/SIGINT (or ``max_seconds``); return the process exit code."""
        scheduler, scheduled = self._build()
        if install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
        scheduler.start()
        jobs = {j.id: j.next_run_time for j in scheduler.get_jobs()}
        self.emit(
            {
                "event": "started",
                "jobs": scheduled,
                "next": {k: v.isoformat() if v else None for k, v in jobs.items()},
            }
        )
        deadline = time.monotonic() + max_seconds if max_seconds else None
        while not self._stopping.wait(0.5):
            if deadline and time.monotonic() > deadline:
                self._stopping.set()
        self.emit({"event": "stopping", "running": sorted(self._running)})
        scheduler.shutdown(wait=False)
        end = time.monotonic() + grace_s
        while self._running and time.monotonic() < end:
            time.sleep(0.2)
        unfinished = sorted(self._running)
        self.emit(
            {
                "event": "stopped",
                "fired": self.fired,
                "failures": self.failures,
                "unfinished": unfinished,
            }
        )
        if unfinished:
            # A run still in flight after the grace period: its lease expires on its own and the
            # run stays 'running' in the graph. Leave without waiting for the worker thread.
            sys.stdout.flush()
            import os

            os._exit(1)
        return 0

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.emit({"event": "signal", "signal": signal.Signals(signum).name})
        self._stopping.set()

    def stop(self) -> None:
        self._stopping.set()
