"""What the HTTP API and the MCP server both do, as async methods over one shared SDK object.

Each method first checks the request's principal (:mod:`kg_platform.serve.principal`): its
right, and that the corpus named is one the key may see (else "not found", as a missing one).

Each method is one SDK call (or two: a search and its explanation) run in a bounded thread pool
(the SDK is synchronous and safe to share across threads). Health checks have their own small
pool and a time limit, so they answer while every SDK thread waits on a database that is gone.
The run verbs (list, show, cancel) are :class:`~kg_platform.serve.run_verbs.RunVerbs`, which
this class extends.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

from kg_platform.errors import KGPError
from kg_platform.ingest.roots import PathGuard
from kg_platform.serve.paths import PublicPaths
from kg_platform.serve.principal import current
from kg_platform.serve.health import GraphHealth
from kg_platform.serve.problems import Problem, graph_unavailable, public_error
from kg_platform.serve.run_verbs import RunVerbs
from kg_platform.serve.tasks import IngestTask, IngestTasks
from kg_platform.serve.uploads import (
    StoredUpload,
    UploadStore,
    clean_after_run,
    upload_folder,
    uploads_root,
)

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["Service"]

T = TypeVar("T")

_log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 5.0
#: the text of the breaker's warm-up search (Service._warm_search): any words do
WARM_QUERY = "what does this corpus say"


class Service(RunVerbs):
    """The platform as the servers see it: async verbs returning JSON-ready dicts."""

    def __init__(self, platform: "KnowledgePlatform") -> None:
        self.platform = platform
        self.settings = platform.settings
        self._limiter = anyio.CapacityLimiter(platform.settings.tuning.serve.threads)
        self._health_limiter = anyio.CapacityLimiter(2)
        self.tasks = IngestTasks(platform, platform.settings.tuning.serve.ingest_workers)
        self.upload_root = uploads_root(platform.settings)
        #: what ingestion by path may read (serve.ingest_roots, never data_dir or cache_dir)
        self.guard = PathGuard.from_settings(platform.settings)
        #: answers show paths relative to their root, uploads by file name
        self.public = PublicPaths(platform.settings)
        self.uploads = UploadStore(platform.settings)
        #: the breaker that answers 503 at once while Neo4j is gone (kg_platform.serve.health)
        self.graph_health = GraphHealth(lambda: self.platform.graph.probe(), warm=self._warm)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the SDK thread pool (503 at once while Neo4j is gone)."""
        return await self.graph_health.run(functools.partial(fn, *args, **kwargs), self._limiter)

    def close(self) -> None:
        self.graph_health.close()
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
        corpus = current().corpus_for("write" if record else "read", corpus)
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
        return self.public.answer(found.to_dict())

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

        corpus = current().corpus_for("read", corpus)
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
        corpus = current().default_corpus("read", corpus, self.settings.corpus)
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
        return self.public.answer(answer.to_dict())

    async def corpora(self) -> list[dict[str, Any]]:
        principal = current()
        principal.require("read")
        if not principal.every_corpus:
            names = await self.call(self.platform.graph.read, "corpus/names")
            visible = principal.visible(r["name"] for r in names)
            return [c.to_dict() for c in await self.call(self.platform.corpora, visible)]
        return [c.to_dict() for c in await self.call(self.platform.corpora)]

    async def source(
        self, source: str, corpus: str | None = None, level: int = 1
    ) -> dict[str, Any]:
        corpus = current().corpus_for("read", corpus)
        outline = await self.call(self.platform.source_outline, source, corpus, level=level)
        return self.public.answer(outline.to_dict())

    async def strategies(self) -> dict[str, str]:
        current().require("read")
        return await self.call(self.platform.strategies)

    # ---------------------------------------------------------------- write
    async def drop_corpus(self, name: str) -> dict[str, Any]:
        current().require("write", name)
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
        """Start ingesting server-side files or folders; return once the run has its id.

        Only inside ``serve.ingest_roots``: each path is resolved (links followed; relative
        paths against the first root) and checked here, cheaply; the folder walk, and its check
        of every file it finds, happen in the worker. A path that is missing and one that is
        not allowed get the same answer."""
        corpus = current().default_corpus("write", corpus, self.settings.corpus)
        name = self.platform.corpus_name(corpus)
        self.graph_health.check()  # 503 at once while Neo4j is gone, not after the run's retries
        if not self.guard:
            raise Problem(
                403,
                "ingestion by path is off: this server has no ingest roots "
                "(serve.ingest_roots is empty)",
                kind="ingest-roots-unset",
                title="Forbidden",
                hint="upload the files to /v1/ingest/upload, or list the folders the server "
                "may read in serve.ingest_roots (KGP_SERVE__INGEST_ROOTS='[\"/srv/docs\"]')",
            )
        resolved = [self.guard.resolve(p) for p in paths]
        refused = [p for p, real in zip(paths, resolved, strict=True) if real is None]
        if not paths or refused:
            raise Problem(
                422,
                "no such file or folder under the server's ingest roots: "
                + (", ".join(repr(p) for p in refused) or "(none given)"),
                hint="name files or folders inside serve.ingest_roots (relative paths are "
                "taken relative to the first root), or upload the files to /v1/ingest/upload",
            )
        task = self.tasks.submit(
            [str(p) for p in resolved if p is not None],
            name,
            include=include,
            exclude=exclude,
            guard=self.guard,
        )
        return await self._started(task)

    def store_uploads(
        self, corpus: str, files: Sequence[tuple[str, Callable[[], bytes]]]
    ) -> list[StoredUpload]:
        """Keep the uploaded files (each ``(name, read)``, read until b"") in the corpus's
        upload folder, all or none (422 for an unusable name, 413 over the quota)."""
        current().require("write", corpus)  # before any file is written
        self.graph_health.check()  # nor while Neo4j is gone (the run could not start)
        return self.uploads.store(corpus, files)

    async def ingest_uploaded(self, files: Sequence[StoredUpload], corpus: str) -> IngestTask:
        """Ingest stored uploads; when the run ends, those that did not land are deleted."""
        current().require("write", corpus)
        stored = list(files)

        def cleanup(task: IngestTask) -> None:
            report = task.report or {}
            landed = [u for key in ("added", "replaced", "skipped") for u in report.get(key, [])]
            clean_after_run(stored, landed)

        task = self.tasks.submit(
            [str(f.path) for f in stored],
            corpus,
            cleanup=cleanup,
            guard=PathGuard([upload_folder(self.settings, corpus)]),
        )
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
                self.public.text(str(task.problem.get("detail", "the ingestion failed to start"))),
                kind=str(task.problem.get("type", "")).rsplit(":", 1)[-1] or None,
                hint=self.public.text(str(task.problem.get("hint", ""))),
            )
        return task

    # --------------------------------------------------------------- health
    async def health(self) -> tuple[bool, dict[str, Any]]:
        """Whether Neo4j answers, and the schema version it holds; never raises, never waits
        longer than :data:`HEALTH_TIMEOUT_S` (and not at all while the breaker is open). The
        reason of a failure is logged under a request id, not answered."""
        body: dict[str, Any] = {"status": "ok", "neo4j": "reachable"}
        down = {
            "status": "degraded",
            "neo4j": "unreachable",
            "detail": "Neo4j does not answer",
            "hint": "is the server running? `kgp neo4j status`",
        }
        if self.graph_health.degraded:
            return False, down
        try:
            with anyio.fail_after(HEALTH_TIMEOUT_S):
                version = await anyio.to_thread.run_sync(
                    self._probe, limiter=self._health_limiter, abandon_on_cancel=True
                )
        except TimeoutError:
            self.graph_health.trip(f"no answer to the health probe within {HEALTH_TIMEOUT_S} s")
            return False, down | {"detail": f"Neo4j did not answer within {HEALTH_TIMEOUT_S:.0f} s"}
        except Exception as exc:  # noqa: BLE001 - any driver failure means: not healthy now
            public = public_error(exc)  # logs the reason under its request id
            self.graph_health.failed(exc)
            failing = not isinstance(exc, KGPError)
            return False, down | {
                "neo4j": "failing" if failing else "unreachable",
                "detail": f"Neo4j does not answer; request id {public.request_id}",
            }
        self.graph_health.recovered()
        body["schema_version"] = version
        return True, body

    def _warm(self) -> None:
        """What the breaker runs before it closes again (see kg_platform.serve.health): the
        key table's read, as the key ring reads it, the schema version ``/v1/health`` reads,
        and one default search, through the requests' own driver."""
        from kg_platform.graph.schema import schema_version
        from kg_platform.serve.keys import KeyStore

        KeyStore(self.platform.graph).active(once=True)
        schema_version(self.platform.graph)
        self._warm_search()

    def _warm_search(self) -> None:
        """The default search once, over the first corpus with chunks, before the breaker
        closes.

        A restarted Neo4j plans every statement afresh on a cold JVM, and the default path's
        first search is nearly all planning. Left to the requests, each one that arrives at
        once plans the same statements itself (Neo4j does not share a plan being made), and
        every one of them waits seconds. Planned here once, while the breaker still answers
        503, the requests then find the plans cached (the cache is keyed by the statement and
        its parameter types, not by the corpus). It does not bring the first 200 sooner: the
        cold planning takes as long here. The measurements are in the lab's operations log
        ("Recovery after a Neo4j kill").

        A search that fails for any reason but an unreachable graph (a corpus still without
        its indexes) does not keep the breaker open: the requests will meet that error
        themselves, and answer it as usual."""
        try:
            corpora = [r["corpus"] for r in self.platform.graph.read("retrieval/mog_corpora")]
            if corpora:
                self.platform.search(WARM_QUERY, corpus=corpora[0])
        except Exception as exc:  # only an unreachable graph keeps the breaker open
            if graph_unavailable(exc):
                raise
            _log.info("the breaker's warm-up search failed: %s", " ".join(str(exc).split()))

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
            public = public_error(exc)  # a model path stays in the log
            return False, body | {
                "status": "not ready",
                "embedder": "failed",
                "detail": public.detail,
                "hint": public.hint,
            }
        return True, body | {"status": "ready", "embedder": embedder.model_name}
