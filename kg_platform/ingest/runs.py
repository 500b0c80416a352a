"""The records of ingestion runs (``(:IngestRun)``), ad-hoc and job alike: read them, and close
those whose process died.

Why one module: ``kgp ingest``, ``kgp jobs run`` and the SDK all write the same node, so one
typed view of it (:class:`RunRecord`) serves ``kgp runs``, the SDK and any service on top.
"""

from __future__ import annotations

import json
import logging
import socket
from typing import Any, Literal

from pydantic import BaseModel, Field

from kg_platform._process import pid_alive
from kg_platform.errors import IngestionError, KGPError
from kg_platform.graph.client import GraphClient
from kg_platform.ingest.report import FileError, FileWarning

log = logging.getLogger(__name__)

__all__ = [
    "RunCancelled",
    "RunNotFound",
    "RunRecord",
    "RunState",
    "close_dead_runs",
    "get_run",
    "list_runs",
    "request_cancel",
]

RunState = Literal[
    "running", "completed", "completed_with_errors", "failed", "interrupted", "cancelled"
]


class RunNotFound(KGPError):
    """No ingestion run has the id asked for."""

    hint = "list the recorded runs with `kgp runs list` (or KnowledgePlatform.runs())"


class RunCancelled(IngestionError):
    """The run stopped because someone asked it to (:func:`request_cancel`)."""

    hint = "ingest the same paths again to finish it: sources already written are skipped"


class RunRecord(BaseModel):
    """One ingestion run as recorded in Neo4j: what it read, how it ended, what it noted."""

    id: str
    corpus: str
    status: RunState | str
    started: str | None = None
    finished: str | None = None
    duration_s: float | None = None
    paths: list[str] = Field(default_factory=list)
    host: str | None = None
    pid: int | None = None
    job: str | None = None  # the job that ran it; None for an ad-hoc `kgp ingest` / SDK call
    trigger: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    errors: list[FileError] = Field(default_factory=list)
    warnings: list[FileWarning] = Field(default_factory=list)
    tokens: int = 0

    @classmethod
    def from_row(cls, row: Any) -> RunRecord:
        data = dict(row)
        for key, empty in (("counts", {}), ("errors", []), ("warnings", [])):
            data[key] = _json(data.get(key), empty)
        data["errors"] = [_file_error(e) for e in data["errors"]]
        data["paths"] = list(data.get("paths") or [])
        data["tokens"] = int(data.get("tokens") or 0)
        data["counts"] = {k: int(v) for k, v in data["counts"].items() if isinstance(v, int)}
        return cls(**data)

    def summary(self) -> str:
        """The run in a few lines, as ``kgp runs show`` prints it."""
        c = self.counts
        lines = [
            f"run {self.id} [{self.status}] corpus={self.corpus}"
            + (f" job={self.job}" if self.job else ""),
            f"started {self.started or '-'}, finished {self.finished or '-'}"
            + (f" ({self.duration_s:.1f}s)" if self.duration_s is not None else ""),
            f"host {self.host or '-'} pid {self.pid or '-'}; paths: "
            + (", ".join(self.paths) or "-"),
            f"sources: {c.get('added', 0)} added, {c.get('replaced', 0)} replaced, "
            f"{c.get('skipped', 0)} unchanged, {c.get('pruned', 0)} pruned, "
            f"{c.get('failed', 0)} failed; {self.tokens} tokens",
        ]
        lines += [
            f"  ! {e.path or '-'}: {e.error}: {e.reason}" + (f" (hint: {e.hint})" if e.hint else "")
            for e in self.errors
        ]
        lines += [f"  warning: {w.path}: {w.warning}" for w in self.warnings]
        return "\n".join(lines)


def _json(raw: Any, empty: Any) -> Any:
    if raw is None or raw == "":
        return empty
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return empty


def _file_error(raw: Any) -> FileError:
    if isinstance(raw, dict):
        return FileError(
            path=str(raw.get("path") or ""),
            error=str(raw.get("error") or ""),
            reason=str(raw.get("reason") or ""),
            hint=str(raw.get("hint") or ""),
        )
    return FileError(path="", error="error", reason=str(raw))


def close_dead_runs(graph: GraphClient, corpus: str | None, current: str = "") -> list[str]:
    """Mark this host's ``running`` runs (of ``corpus``, or of every corpus when None) whose
    process is gone as ``interrupted``; return their ids.

    Why: a run killed with SIGKILL (or by a power cut) cannot record its own end, and a record
    that says ``running`` forever hides that the data of that run was resumed by a later one.
    Only runs recorded on this host are judged (a pid means nothing elsewhere).
    """
    rows = graph.read(
        "ingest/runs_running", corpus=corpus, host=socket.gethostname(), current=current
    )
    dead = [r["id"] for r in rows if not (r["pid"] and pid_alive(int(r["pid"])))]
    if dead:
        graph.write("ingest/runs_interrupted", ids=dead)
        log.warning("marked %d run(s) as interrupted: %s", len(dead), ", ".join(dead))
    return dead


def list_runs(graph: GraphClient, corpus: str | None = None, limit: int = 50) -> list[RunRecord]:
    """The newest ``limit`` runs (of ``corpus``, or of every corpus), newest first."""
    rows = graph.read("ingest/runs_list", corpus=corpus, limit=int(limit))
    return [RunRecord.from_row(r) for r in rows]


def get_run(graph: GraphClient, run_id: str) -> RunRecord:
    rows = graph.read("ingest/run_get", id=run_id)
    if not rows:
        raise RunNotFound(f"no ingestion run {run_id!r}")
    return RunRecord.from_row(rows[0])


def request_cancel(graph: GraphClient, run_id: str) -> RunRecord:
    """Ask the running run ``run_id`` to stop, from any process on the same Neo4j: the request
    is a ``cancel_requested`` time on its ``(:IngestRun)`` node, which the run reads between
    files (:meth:`kg_platform.ingest.runner.IngestRunner.check_cancelled`) and then ends as
    ``cancelled``; every source is written whole or not at all. Returns the run's record as it
    is now (still ``running`` until the run notices). Raises :class:`RunNotFound` for an
    unknown id; a run that already ended is returned unchanged (check its ``status``)."""
    rows = graph.write("ingest/run_cancel", id=run_id)
    if not rows:
        raise RunNotFound(f"no ingestion run {run_id!r}")
    return get_run(graph, run_id)
