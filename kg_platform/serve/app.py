"""The HTTP API of ``kgp serve``: FastAPI routes over :class:`~kg_platform.serve.service.Service`.

Every route is one service call; the gate (:mod:`kg_platform.serve.limits`) checks the key,
the rate and the size before a route runs; every error answers RFC 9457 problem+json with the
platform's hint (:mod:`kg_platform.serve.problems`). OpenAPI is at ``/docs``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from fastapi import FastAPI, File, Form, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from kg_platform.errors import KGPError
from kg_platform.requests import (
    MAX_LEVEL,
    AskRequest,
    ExplainRequest,
    IngestRequest,
    SearchRequest,
    UploadRequest,
    describe_errors,
)
from kg_platform.serve.auth import KeyCheck
from kg_platform.serve.limits import BodyTooLarge, Gate, GateRules, TokenBuckets
from kg_platform.serve.problems import MEDIA_TYPE, Problem, problem_for
from kg_platform.serve.service import Service

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["OPEN_PATHS", "build_app"]

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset(
    {"/v1/health", "/v1/ready", "/docs", "/openapi.json", "/docs/oauth2-redirect"}
)
UPLOAD_PREFIX = "/v1/ingest/upload"
PROBLEM: dict[str, Any] = {
    "model": None,
    "content": {MEDIA_TYPE: {}},
    "description": "problem+json",
}
ERRORS: dict[int | str, dict[str, Any]] = {
    401: PROBLEM | {"description": "missing or wrong API key"},
    413: PROBLEM | {"description": "request body over the limit"},
    422: PROBLEM | {"description": "invalid request (with a hint)"},
    429: PROBLEM | {"description": "rate limit exceeded"},
    503: PROBLEM | {"description": "Neo4j unavailable"},
}


def _problem_response(problem: Problem, request: Request) -> JSONResponse:
    return JSONResponse(
        problem.body(instance=request.url.path),
        status_code=problem.status,
        media_type=MEDIA_TYPE,
        headers=problem.headers,
    )


def build_app(platform: "KnowledgePlatform", *, key: str) -> FastAPI:
    """The API over ``platform`` (shared by every request), guarded by ``key``."""
    service = Service(platform)
    cfg = platform.settings.serve

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:  # load the model now, not in the first request (Neo4j may be down: that is fine)
            await anyio.to_thread.run_sync(lambda: platform.embedder)
        except Exception as exc:  # noqa: BLE001 - reported by /v1/ready; the API still serves
            log.warning("the embedder did not load: %s", exc)
        yield
        service.close()

    app = FastAPI(
        title="kg-platform",
        summary="Retrieval, answers and ingestion over the kg-platform knowledge graph.",
        version="1",
        lifespan=lifespan,
        responses=ERRORS,
    )
    app.state.service = service
    app.add_middleware(
        Gate,
        rules=GateRules(
            key=KeyCheck(key),
            buckets=TokenBuckets(cfg.rate_per_s, cfg.rate_burst),
            max_body_bytes=cfg.max_body_bytes,
            open_paths=OPEN_PATHS,
            upload_prefixes=(UPLOAD_PREFIX,),
            max_upload_bytes=cfg.max_upload_bytes,
        ),
    )
    _add_error_handlers(app)
    _add_routes(app, service)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem) -> JSONResponse:
        return _problem_response(exc, request)

    @app.exception_handler(KGPError)
    async def on_platform_error(request: Request, exc: KGPError) -> JSONResponse:
        return _problem_response(problem_for(exc), request)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        where = "; ".join(describe_errors(exc.errors())[:5])
        problem = Problem(
            422,
            f"the request does not match the schema: {where}",
            kind="invalid-request",
            hint="the OpenAPI schema at /docs lists each endpoint's fields",
            extra={"errors": errors},
        )
        return _problem_response(problem, request)

    @app.exception_handler(HTTPException)
    async def on_http(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc, BodyTooLarge):
            return _problem_response(exc.problem, request)
        hint = "see /docs for the endpoints" if exc.status_code in (404, 405) else ""
        problem = Problem(
            exc.status_code, str(exc.detail), hint=hint, headers=dict(exc.headers or {})
        )
        return _problem_response(problem, request)

    # anything else is a bug: Starlette answers this at its outermost layer, then re-raises
    # so the server logs the traceback (never sent to the client)
    @app.exception_handler(Exception)
    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        return _problem_response(problem_for(exc), request)


def _add_routes(app: FastAPI, service: Service) -> None:
    @app.get("/v1/health", tags=["status"])
    async def health() -> JSONResponse:
        """Whether Neo4j answers (503 with status 'degraded' while it does not); no key needed."""
        ok, body = await service.health()
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/v1/ready", tags=["status"])
    async def ready() -> JSONResponse:
        """Healthy, schema applied and embedder loaded; no key needed."""
        ok, body = await service.ready()
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.post("/v1/search", tags=["retrieval"])
    async def search(body: SearchRequest) -> dict[str, Any]:
        """The top items for a query; without a strategy, the SDK's default path."""
        return await service.search(
            body.query,
            corpus=body.corpus,
            k=body.k,
            strategy=body.strategy,
            scope=body.scope,
            select=body.select,
            record=body.record,
            max_tokens=body.max_tokens,
        )

    @app.post("/v1/explain", tags=["retrieval"])
    async def explain(body: ExplainRequest) -> dict[str, Any]:
        """How each item of a search was found, and the Neo4j Browser query showing it."""
        return await service.explain(
            body.query,
            corpus=body.corpus,
            k=body.k,
            strategy=body.strategy,
            scope=body.scope,
            select=body.select,
            item_id=body.item_id,
        )

    @app.post("/v1/ask", tags=["retrieval"])
    async def ask(body: AskRequest) -> dict[str, Any]:
        """An answer with citations (the configured LLM), or the evidence sentences without one."""
        return await service.ask(
            body.question,
            corpus=body.corpus,
            strategy=body.strategy,
            mode=body.mode,
            scope=body.scope,
            context_tokens=body.max_tokens,
            feedback=body.feedback,
        )

    @app.get("/v1/strategies", tags=["retrieval"])
    async def strategies() -> dict[str, str]:
        """Every retrieval strategy with its one-line description."""
        return await service.strategies()

    @app.get("/v1/corpora", tags=["corpora"])
    async def corpora() -> dict[str, Any]:
        """Every corpus with its counts of sources, sections, chunks and pieces."""
        return {"corpora": await service.corpora()}

    @app.delete("/v1/corpora/{name:path}", tags=["corpora"])
    async def drop_corpus(name: str) -> dict[str, Any]:
        """Delete a corpus and everything in it (a name may hold ``/``: ``/v1/corpora/a/b``)."""
        return await service.drop_corpus(name)

    @app.get("/v1/sources/{source:path}", tags=["corpora"])
    async def source(
        source: str,
        corpus: str | None = Query(None),
        level: int = Query(1, ge=1, le=MAX_LEVEL, description="MoG level of the chunks listed"),
    ) -> dict[str, Any]:
        """One document's sections and chunks (named by id, title, path or file name; a name
        may hold ``/``)."""
        return await service.source(source, corpus, level)

    @app.post("/v1/ingest", status_code=202, tags=["ingestion"])
    async def ingest(body: IngestRequest) -> dict[str, Any]:
        """Ingest files or folders on the server in the background; returns the run id."""
        task = await service.ingest_paths(
            body.paths, body.corpus, include=body.include, exclude=body.exclude
        )
        return _accepted(task.to_dict())

    @app.post(UPLOAD_PREFIX, status_code=202, tags=["ingestion"])
    async def ingest_upload(
        request: Request,
        files: Annotated[list[UploadFile], File(description="the documents")],
        corpus: Annotated[
            str | None, Form(description="target corpus (default: KGP_CORPUS)")
        ] = None,
    ) -> dict[str, Any]:
        """Upload documents and ingest them in the background; returns the run id."""
        raw = (await request.form()).get("corpus")  # FastAPI reads an empty field as unset
        fields = {"corpus": raw if isinstance(raw, str) else corpus}
        UploadRequest.of(files=[upload.filename or "" for upload in files], **fields)
        name = service.platform.corpus_name(corpus)
        stored = []
        for upload in files:
            stored.append(
                await service.call(
                    service.store_upload,
                    name,
                    upload.filename or "",
                    lambda f=upload: f.file.read(1 << 20),
                )
            )
        task = await service.ingest_uploaded(stored, name)
        return _accepted(task.to_dict())

    @app.get("/v1/runs", tags=["ingestion"])
    async def runs(
        corpus: str | None = Query(None), limit: int = Query(25, ge=1, le=500)
    ) -> dict[str, Any]:
        """This server's ingestion runs (live progress) and the graph's newest run records."""
        return {"runs": await service.runs(corpus, limit)}

    @app.get("/v1/runs/{run_id}", tags=["ingestion"])
    async def run(run_id: str) -> dict[str, Any]:
        """One run: status, progress, errors (a run id or the task id the ingest returned)."""
        return await service.run(run_id)


def _accepted(task: dict[str, Any]) -> dict[str, Any]:
    ref = task["id"] or task["task_id"]
    return task | {"run_id": task["id"], "links": {"run": f"/v1/runs/{ref}"}}
