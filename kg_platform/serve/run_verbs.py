"""The servers' run verbs: list the ingestion runs, show one, cancel one.

Why a module of its own: a run is seen from two places, the server's own tasks (live progress,
:mod:`kg_platform.serve.tasks`) and the graph's ``(:IngestRun)`` records of every other process,
and each answer must hide the runs of corpora the key may not see as if they did not exist. That
merging and hiding is this module; :class:`~kg_platform.serve.service.Service` extends
:class:`RunVerbs` with the rest of what the HTTP API and the MCP server do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kg_platform.ingest.runs import RunNotFound
from kg_platform.serve.paths import PublicPaths
from kg_platform.serve.principal import current
from kg_platform.serve.problems import Problem
from kg_platform.serve.tasks import IngestTask, IngestTasks

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["RunVerbs"]

T = TypeVar("T")


class RunVerbs:
    """Runs as the servers show them (part of :class:`~kg_platform.serve.service.Service`)."""

    platform: "KnowledgePlatform"
    tasks: IngestTasks
    public: PublicPaths

    if TYPE_CHECKING:  # Service's: one SDK call in its thread pool

        async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...

    def view(self, task: IngestTask) -> dict[str, Any]:
        """A task as answers show it (no server paths)."""
        return self.public.run(task.to_dict())

    async def runs(self, corpus: str | None = None, limit: int = 25) -> list[dict[str, Any]]:
        """The server's own runs (with live progress) first, then the graph's newest records
        of every other run (ad-hoc ``kgp ingest``, jobs). A named ``corpus`` that the graph
        does not hold and that has no run raises :func:`~kg_platform.corpus_name.corpus_not_found`
        (404, as every read; a corpus this key may not see gets the same answer)."""
        principal = current()
        principal.require("read", corpus)
        mine = [t for t in self.tasks.all() if corpus is None or t.corpus == corpus]
        mine = [t for t in mine if principal.sees(t.corpus)]
        listed = await self._views(mine)
        known = {t.run_id for t in mine if t.run_id}
        if corpus is None and not principal.every_corpus:
            names = await self.call(self.platform.graph.read, "serve/run_corpora")
            rows = await self.call(
                self.platform.graph.read,
                "serve/runs_recent_in",
                corpora=principal.visible(r["name"] for r in names),
                limit=limit,
            )
        else:
            rows = await self.call(
                self.platform.graph.read, "serve/runs_recent", corpus=corpus, limit=limit
            )
        if corpus is not None and not mine and not rows:
            # nothing to list: a misspelt name, or a corpus with no run (its first ingest
            # has a run from its start, so a corpus being created is listed, not refused)
            await self.call(self.platform.require_corpus, corpus)
        listed.extend(self.public.run(_run_record(r)) for r in rows if r["id"] not in known)
        return listed[: max(limit, len(mine))]

    async def run(self, run_id: str) -> dict[str, Any]:
        principal = current()
        principal.require("read")
        task = self.tasks.find(run_id)
        if task is not None and principal.sees(task.corpus):
            return (await self._views([task]))[0]
        if task is not None:
            raise _no_run(run_id)  # a run of a corpus this key may not see does not exist
        return self.public.run(await self._recorded_run(run_id))

    async def _views(self, tasks: list[IngestTask]) -> list[dict[str, Any]]:
        """The tasks as :meth:`view` shows them, with the cancels the graph records for their
        runs merged in: a cancel asked for through another replica on the same Neo4j is not
        in this server's task, and every replica must answer the same for the run."""
        views = [self.view(t) for t in tasks]
        ids = [t.run_id for t in tasks if t.run_id and not t.cancel_pending]
        if ids:
            rows = await self.call(self.platform.graph.read, "serve/runs_cancel_requested", ids=ids)
            flagged = {r["id"] for r in rows}
            for view in views:
                if view["id"] in flagged:
                    view["cancel_requested"] = True
        return views

    async def _recorded_run(self, run_id: str) -> dict[str, Any]:
        rows = await self.call(self.platform.graph.read, "serve/run", id=run_id)
        if not rows or not current().sees(rows[0]["corpus"] or ""):
            # a run of a corpus this key may not see is answered as one that does not exist
            raise _no_run(run_id)
        return _run_record(rows[0])

    async def cancel_run(self, run_id: str) -> dict[str, Any]:
        """Ask a run (a task id or a run id; started by this server or any other on the same
        Neo4j) to stop; it ends as ``cancelled`` at its next file, every source whole or not at
        all. Answers the run as it is now; 409 when it had already ended."""
        principal = current()
        task = self.tasks.find(run_id)
        if task is not None and not principal.sees(task.corpus):
            raise _no_run(run_id)  # as a run that does not exist
        if task is not None:
            principal.require("write", task.corpus)
            if self.tasks.cancel_queued(task):
                return self.view(task)
            if task.finished:
                raise _ended(run_id, task.status)
            task.cancel_pending = True  # applied at its start if it is not recorded yet
            if task.run_id is not None:
                try:
                    await self.call(self.platform.cancel_run, task.run_id)
                except RunNotFound:
                    pass  # waiting for its corpus: not recorded yet
            return self.view(task)
        before = await self._recorded_run(run_id)  # 404 for a missing or hidden run
        principal.require("write", str(before["corpus"] or ""))
        try:
            await self.call(self.platform.cancel_run, run_id)
        except RunNotFound:
            raise _no_run(run_id) from None
        record = await self._recorded_run(run_id)
        if record["status"] != "running":
            raise _ended(run_id, str(record["status"]))
        return self.public.run(record)


def _run_record(row: Any) -> dict[str, Any]:
    def parsed(value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    return {
        "id": row["id"],
        "corpus": row["corpus"],
        "job": row["job"],
        "status": row["status"],
        "started": row["started"],
        "finished": row["finished"],
        "duration_s": row["duration_s"],
        "counts": parsed(row["counts"]),
        "errors": parsed(row["errors"]) or [],
        "tokens": row["tokens"],
        "paths": list(row["paths"] or []),
        "cancel_requested": bool(row.get("cancel_requested")),
        "source": "graph",
    }


def _no_run(run_id: str) -> Problem:
    return Problem(
        404,
        f"there is no ingestion run {run_id!r}",
        hint="GET /v1/runs lists the runs (ids look like run-YYYYMMDDTHHMMSS-xxxxxxxx)",
    )


def _ended(run_id: str, status: str) -> Problem:
    return Problem(
        409,
        f"ingestion run {run_id!r} has already ended ({status}); there is nothing to cancel",
        kind="run-ended",
        hint="GET /v1/runs/{id} shows how it ended",
    )
