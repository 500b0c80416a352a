"""What the HTTP API and the MCP server both do, as async methods over one shared SDK object.

Each method is one SDK call (or two: a search and its explanation) run in a bounded thread pool
(the SDK is synchronous and safe to share across threads). Health checks have their own small
pool and a time limit, so they answer while every SDK thread waits on a database that is gone.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

from kg_platform.corpus_name import corpus_key
from kg_platform.errors import KGPError
from kg_platform.serve.problems import Problem
from kg_platform.serve.tasks import IngestTask, IngestTasks

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["Service"]

T = TypeVar("T")

HEALTH_TIMEOUT_S = 5.0


class Service:
    """The platform as the servers see it: async verbs returning JSON-ready dicts."""

    def __init__(self, platform: "KnowledgePlatform") -> None:
        cfg = platform.settings.serve
        self.platform = platform
        self.settings = platform.settings
        self._limiter = anyio.CapacityLimiter(cfg.threads)
        self._health_limiter = anyio.CapacityLimiter(2)
        self.tasks = IngestTasks(platform, cfg.ingest_workers)
        self.upload_root = platform.settings.data_dir / "serve" / "uploads"

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the SDK thread pool."""
        return await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), limiter=self._limiter
        )

    def close(self) -> None:
        self.tasks.shutdown()
        self.platform.close()

    # ----------------------------------------------------------------- read
    async def search(
        self,
        query: str,
        *,
        corpus: str | None = None,
        k: int | None = None,
        strategy: str | None = None,
        scope: Sequence[str] | None = None,
        select: str | None = None,
        record: bool = False,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        found = await self.call(
            self.platform.search,
            query,
            strategy=strategy,
            k=k,
            corpus=corpus,
            scope=list(scope) if scope else None,
            select=select,
            record=record,
            max_tokens=max_tokens,
        )
        return found.to_dict()

    async def explain(
        self,
        query: str,
        *,
        corpus: str | None = None,
        k: int | None = None,
        strategy: str | None = None,
        scope: Sequence[str] | None = None,
        select: str | None = None,
        item_id: str | None = None,
    ) -> dict[str, Any]:
        """The search's items with how each was found, and the Neo4j Browser query that shows
        their subgraph (of one item when ``item_id`` names one of them)."""
        from kg_platform.retrieval.explain import browser_snippet, explain_lines

        found = await self.call(
            self.platform.search,
            query,
            strategy=strategy,
            k=k,
            corpus=corpus,
            scope=list(scope) if scope else None,
            select=select,
        )
        items = found.items
        if item_id is not None:
            items = [it for it in items if it.id == item_id]
            if not items:
                raise Problem(
                    404,
                    f"item {item_id!r} is not among this search's results",
                    hint="explain an id returned by the same search (same query, corpus, "
                    "strategy, k, scope and select)",
                )
        return {
            "question": found.query,
            "strategy": found.strategy,
            "select": found.select,
            "items": [
                {
                    "id": it.id,
                    "rank": found.items.index(it) + 1,
                    "kind": it.kind,
                    "level": it.level,
                    "score": it.score,
                    "query": it.query,
                    "breakdown": it.breakdown,
                    "path": it.path,
                    "source_title": it.source_title,
                    "text": it.text,
                }
                for it in items
            ],
            "explanation": explain_lines(items),
            "browser": browser_snippet(items),
        }

    async def ask(
        self,
        question: str,
        *,
        corpus: str | None = None,
        strategy: str | None = None,
        mode: str = "auto",
        scope: Sequence[str] | None = None,
        context_tokens: int | None = None,
        feedback: bool = False,
    ) -> dict[str, Any]:
        answer = await self.call(
            self.platform.ask,
            question,
            corpus=corpus,
            strategy=strategy,
            mode=mode,
            scope=list(scope) if scope else None,
            context_tokens=context_tokens,
            feedback=feedback,
        )
        return answer.to_dict()

    async def corpora(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in await self.call(self.platform.corpora)]

    async def source(
        self, source: str, corpus: str | None = None, level: int = 1
    ) -> dict[str, Any]:
        outline = await self.call(self.platform.source_outline, source, corpus, level=level)
        return outline.to_dict()

    async def strategies(self) -> dict[str, str]:
        return await self.call(self.platform.strategies)

    # ---------------------------------------------------------------- write
    async def drop_corpus(self, name: str) -> dict[str, Any]:
        dropped = await self.call(self.platform.drop_corpus, name)
        return {"corpus": name, "sources_deleted": dropped}

    async def ingest_paths(
        self,
        paths: Sequence[str],
        corpus: str | None,
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
    ) -> IngestTask:
        """Start ingesting server-side files or folders; return once the run has its id."""
        name = self.platform.corpus_name(corpus)
        missing = [p for p in paths if not Path(p).exists()]
        if not paths or missing:
            raise Problem(
                422,
                f"no such file or folder on the server: {', '.join(missing) or '(none given)'}",
                hint="name paths that exist on the server's machine (absolute paths), or "
                "upload the files to /v1/ingest/upload",
            )
        task = self.tasks.submit(list(paths), name, include=include, exclude=exclude)
        return await self._started(task)

    def upload_dir(self, corpus: str) -> Path:
        """Where uploads of ``corpus`` are kept: one stable folder per corpus, so a file uploaded
        again under the same name is the same source (skipped when unchanged, else replaced)."""
        folder = self.upload_root / corpus_key(corpus)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def store_upload(self, corpus: str, filename: str, chunks: Callable[[], bytes]) -> Path:
        """Write one uploaded file (read with ``chunks`` until it returns b"") into the
        corpus's upload folder, atomically (a reader never sees half a file)."""
        name = Path(filename.replace("\\", "/")).name.replace("\x00", "")
        if name in ("", ".", ".."):
            raise Problem(422, f"unusable upload file name {filename!r}", hint="name the file")
        folder = self.upload_dir(corpus)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                while block := chunks():
                    out.write(block)
            target = folder / name
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    async def ingest_uploaded(self, files: Sequence[Path], corpus: str) -> IngestTask:
        task = self.tasks.submit([str(f) for f in files], corpus)
        return await self._started(task)

    async def _started(self, task: IngestTask, wait_s: float = 60.0) -> IngestTask:
        """Wait (without holding a thread) until the run has an id or has failed."""
        with anyio.move_on_after(wait_s):
            while not task.started_event.is_set():
                await anyio.sleep(0.05)
        if task.run_id is None and task.problem is not None:
            status = int(task.problem.get("status", 500))
            raise Problem(
                status,
                str(task.problem.get("detail", "the ingestion failed to start")),
                kind=str(task.problem.get("type", "")).rsplit(":", 1)[-1] or None,
                hint=str(task.problem.get("hint", "")),
            )
        return task

    # ----------------------------------------------------------------- runs
    async def runs(self, corpus: str | None = None, limit: int = 25) -> list[dict[str, Any]]:
        """The server's own runs (with live progress) first, then the graph's newest records
        of every other run (ad-hoc ``kgp ingest``, jobs)."""
        mine = [t for t in self.tasks.all() if corpus is None or t.corpus == corpus]
        listed = [t.to_dict() for t in mine]
        known = {t.run_id for t in mine if t.run_id}
        rows = await self.call(
            self.platform.graph.read, "serve/runs_recent", corpus=corpus, limit=limit
        )
        listed.extend(_run_record(r) for r in rows if r["id"] not in known)
        return listed[: max(limit, len(mine))]

    async def run(self, run_id: str) -> dict[str, Any]:
        task = self.tasks.find(run_id)
        if task is not None:
            return task.to_dict()
        rows = await self.call(self.platform.graph.read, "serve/run", id=run_id)
        if not rows:
            raise Problem(
                404,
                f"there is no ingestion run {run_id!r}",
                hint="GET /v1/runs lists the runs (ids look like run-YYYYMMDDTHHMMSS-xxxxxxxx)",
            )
        return _run_record(rows[0])

    # --------------------------------------------------------------- health
    async def health(self) -> tuple[bool, dict[str, Any]]:
        """Whether Neo4j answers, and the schema version it holds; never raises, never waits
        longer than :data:`HEALTH_TIMEOUT_S`."""
        body: dict[str, Any] = {"status": "ok", "neo4j": "reachable"}
        try:
            with anyio.fail_after(HEALTH_TIMEOUT_S):
                version = await anyio.to_thread.run_sync(
                    self._probe, limiter=self._health_limiter, abandon_on_cancel=True
                )
        except TimeoutError:
            return False, {
                "status": "degraded",
                "neo4j": "unreachable",
                "detail": f"Neo4j did not answer within {HEALTH_TIMEOUT_S:.0f} s",
                "hint": "is the server running? `kgp neo4j status`",
            }
        except KGPError as exc:
            return False, {
                "status": "degraded",
                "neo4j": "unreachable",
                "detail": str(exc.args[0]) if exc.args else type(exc).__name__,
                "hint": exc.hint,
            }
        except Exception as exc:  # noqa: BLE001 - any driver failure means: not healthy now
            return False, {
                "status": "degraded",
                "neo4j": "failing",
                "detail": " ".join(f"{type(exc).__name__}: {exc}".split())[:500],
                "hint": "check the Neo4j server and its log; `kgp neo4j status`",
            }
        body["schema_version"] = version
        return True, body

    def _probe(self) -> int | None:
        from kg_platform.graph.schema import schema_version

        graph = self.platform.graph
        graph.verify()
        return schema_version(graph)

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        """Healthy, with the schema applied and the embedder loaded (the first query would
        otherwise pay for loading the model)."""
        ok, body = await self.health()
        if not ok:
            return ok, body
        if body.get("schema_version") is None:
            return False, body | {
                "status": "not ready",
                "schema": "missing",
                "hint": "apply the schema: `kgp init` (or ingest something)",
            }
        try:
            embedder = await self.call(lambda: self.platform.embedder)
        except KGPError as exc:
            return False, body | {
                "status": "not ready",
                "embedder": "failed",
                "detail": str(exc.args[0]) if exc.args else "",
                "hint": exc.hint,
            }
        return True, body | {"status": "ready", "embedder": embedder.model_name}


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
        "source": "graph",
    }
