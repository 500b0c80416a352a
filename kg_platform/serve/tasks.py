"""Background ingestion for the API: a run starts in a worker thread and its progress is read
from the task while it runs, then from its report (and the graph's ``(:IngestRun)``) after.

Why threads and not the request: an ingestion takes seconds to hours; the request returns the
run id as soon as the run has one, and ``GET /v1/runs/{id}`` shows how far it got.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform.errors import KGPError
from kg_platform.serve.problems import problem_for

if TYPE_CHECKING:
    from kg_platform.ingest.roots import PathGuard
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["IngestTask", "IngestTasks"]

log = logging.getLogger(__name__)


@dataclass
class IngestTask:
    """One ingestion the server started, as its progress events describe it."""

    task_id: str
    corpus: str
    paths: list[str]
    submitted: str
    run_id: str | None = None
    #: queued, running, then the report's status (completed, completed_with_errors, failed,
    #: cancelled)
    status: str = "queued"
    phase: str = ""
    total: int | None = None
    done: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] | None = None
    problem: dict[str, Any] | None = None
    #: run once the run has ended, with the task (an upload's cleanup of its refused files)
    cleanup: Callable[["IngestTask"], None] | None = field(default=None, repr=False)
    #: what the run may read (a server's ingest roots, or the upload's folder)
    guard: "PathGuard | None" = field(default=None, repr=False)
    #: a cancel asked for before the run was recorded in the graph: applied at its start
    cancel_pending: bool = False
    started_event: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def finished(self) -> bool:
        return self.status not in ("queued", "running")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.run_id,
            "task_id": self.task_id,
            "corpus": self.corpus,
            "status": self.status,
            "phase": self.phase,
            "submitted": self.submitted,
            "progress": {"done": self.done, "total": self.total},
            "paths": list(self.paths),
            "errors": list(self.errors),
            "report": self.report,
            "problem": self.problem,
            "cancel_requested": self.cancel_pending,
            "source": "server",
        }

    def on_event(self, event: dict[str, Any]) -> None:
        """The ingestion's progress callback (called from its thread)."""
        kind = event.get("event")
        if event.get("run_id"):
            self.run_id = str(event["run_id"])
            self.status = "running"
            self.started_event.set()
        if kind == "listing":
            self.phase = "listing files"
        elif kind == "start":
            self.total = int(event.get("total") or 0)
            self.phase = "ingesting"
        elif kind == "waiting":
            self.phase = f"waiting for another run of corpus {self.corpus!r}"
        elif kind == "source":
            self.done += 1
            if event.get("status") == "error" and isinstance(event.get("error"), dict):
                self.errors.append(dict(event["error"]))
        elif kind == "phase":
            self.phase = str(event.get("name") or "")
        elif kind == "done" and isinstance(event.get("report"), dict):
            self.report = dict(event["report"])


class IngestTasks:
    """The server's ingestions: a bounded pool of worker threads and the tasks it ran."""

    def __init__(self, platform: "KnowledgePlatform", workers: int, keep: int = 200) -> None:
        self._platform = platform
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgp-ingest")
        self._tasks: dict[str, IngestTask] = {}
        self._keep = keep
        self._lock = threading.Lock()

    def submit(
        self,
        paths: Sequence[str],
        corpus: str,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        cleanup: Callable[[IngestTask], None] | None = None,
        guard: "PathGuard | None" = None,
    ) -> IngestTask:
        task = IngestTask(
            task_id=uuid.uuid4().hex[:12],
            corpus=corpus,
            paths=list(paths),
            submitted=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            cleanup=cleanup,
            guard=guard,
        )
        with self._lock:
            self._tasks[task.task_id] = task
            finished = [t for t in self._tasks.values() if t.finished]
            for old in finished[: max(0, len(self._tasks) - self._keep)]:
                self._tasks.pop(old.task_id, None)
        self._pool.submit(self._run, task, include, exclude)
        return task

    def _run(
        self,
        task: IngestTask,
        include: Sequence[str] | None,
        exclude: Sequence[str] | None,
    ) -> None:
        with self._lock:
            if task.status == "cancelled":  # cancelled while queued: never started
                task.started_event.set()
                self._cleanup(task)
                return
            task.status = "running"
        try:
            report = self._platform.ingest(
                task.paths,
                task.corpus,
                include=include,
                exclude=exclude,
                progress=lambda event: self._progress(task, event),
                guard=task.guard,
            )
            task.run_id = report.run_id
            task.report = report.model_dump()
            task.status = report.status
        except BaseException as exc:  # noqa: BLE001 - the task records it; the server goes on
            task.problem = problem_for(exc).body()
            task.status = "failed"
        finally:
            task.started_event.set()
            self._cleanup(task)

    def _cleanup(self, task: IngestTask) -> None:
        if task.cleanup is not None:
            try:
                task.cleanup(task)
            except OSError as exc:
                log.warning("could not remove the uploads of task %s: %s", task.task_id, exc)

    def _progress(self, task: IngestTask, event: dict[str, Any]) -> None:
        task.on_event(event)
        # the run is recorded now: a cancel asked for while it waited for its corpus applies
        if event.get("event") == "start" and task.cancel_pending and task.run_id:
            try:
                self._platform.cancel_run(task.run_id)
            except KGPError as exc:  # the run goes on; the caller may ask again
                log.warning("could not cancel run %s: %s", task.run_id, exc)

    def cancel_queued(self, task: IngestTask) -> bool:
        """Cancel ``task`` if it has not started (it then never runs); whether it had not."""
        with self._lock:
            if task.status != "queued":
                return False
            task.status = "cancelled"
            task.cancel_pending = True
            return True

    def find(self, run_or_task_id: str) -> IngestTask | None:
        with self._lock:
            if run_or_task_id in self._tasks:
                return self._tasks[run_or_task_id]
            return next((t for t in self._tasks.values() if t.run_id == run_or_task_id), None)

    def all(self) -> list[IngestTask]:
        with self._lock:
            return sorted(self._tasks.values(), key=lambda t: t.submitted, reverse=True)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
