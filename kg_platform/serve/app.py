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
from kg_platform.serve.boundary import DOCS_PATHS, RequestIds, add_cors, add_docs
from kg_platform.serve.keys import key_ring
from kg_platform.serve.limits import AuthFailures, BodyTooLarge, Gate, GateRules, TokenBuckets
from kg_platform.serve.principal import current
from kg_platform.serve.problems import MEDIA_TYPE, Problem, problem_for
from kg_platform.serve.service import Service

if TYPE_CHECKING:
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = ["OPEN_PATHS", "build_app"]

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset(
    {"/v1/health", "/v1/ready", "/docs", "/openapi.json", "/docs/oauth2-redirect"} | DOCS_PATHS
)
UPLOAD_PREFIX = "/v1/ingest/upload"
PROBLEM: dict[str, Any] = {
    "model": None,
    "content": {MEDIA_TYPE: {}},
    "description": "problem+json",
}
ERRORS: dict[int | str, dict[str, Any]] = {
    401: PROBLEM | {"description": "missing or wrong API key"},
    403: PROBLEM | {"description": "the key lacks the right (write, admin) for this"},
    404: PROBLEM | {"description": "no such corpus (or one this key may not see), run or item"},
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


def build_app(platform: "KnowledgePlatform", *, key: str | None) -> FastAPI:
    """The API over ``platform`` (shared by every request), guarded by the server's ``key``
    (admin over every corpus) and the graph's keys (:mod:`kg_platform.serve.keys`)."""
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
        docs_url=None,  # /docs is served offline by boundary.add_docs
    )
    app.state.service = service
    app.add_middleware(
        Gate,
        rules=GateRules(
            keys=key_ring(platform, key, service.graph_health),
            buckets=TokenBuckets(cfg.rate_per_s, cfg.rate_burst),
            failures=AuthFailures(
                platform.settings.tuning.serve.auth_fail_limit,
                platform.settings.tuning.serve.auth_fail_window_s,
            ),
            max_body_bytes=cfg.max_body_bytes,
            open_paths=OPEN_PATHS,
            upload_prefixes=(UPLOAD_PREFIX,),
            max_upload_bytes=cfg.max_upload_bytes,
        ),
    )
    add_cors(app, cfg)  # outside the gate: a preflight carries no key
    app.add_middleware(RequestIds)  # outermost: every answer, the gate's too, has its id
    _add_error_handlers(app)
    add_docs(app)
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
        wrong = _body_problem(request, errors)
        if wrong is not None:
            return _problem_response(wrong, request)
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
        problem = Problem(
            exc.status_code,
            str(exc.detail),
            hint=_HTTP_HINTS.get(exc.status_code, "see /docs for the endpoints and their fields"),
            headers=dict(exc.headers or {}),
        )
        return _problem_response(problem, request)

    # anything else is a bug: Starlette answers this at its outermost layer, then re-raises
    # so the server logs the traceback (never sent to the client)
    @app.exception_handler(Exception)
    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        return _problem_response(problem_for(exc), request)


_HTTP_HINTS = {
    400: "send a well-formed body for this endpoint (see /docs)",
    404: "see /docs for the endpoints",
    405: "see /docs for the methods each endpoint takes",
}


def _body_problem(request: Request, errors: list[dict[str, Any]]) -> Problem | None:
    """400 for a JSON body that does not parse, 415 for a body that is not JSON at all."""
    if any(e["type"] == "json_invalid" for e in errors):
        return Problem(
            400,
            "the request body is not well-formed JSON",
            kind="malformed-json",
            hint="send a JSON object (Content-Type: application/json); /docs has each body",
        )
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    want = "multipart/form-data" if request.url.path == UPLOAD_PREFIX else "application/json"
    on_body = any(e["loc"][:1] == ["body"] for e in errors)
    if on_body and media and media != want and not media.endswith("+json"):
        return Problem(
            415,
            f"this endpoint takes a {want} body, not {media}",
            hint=f"send Content-Type: {want} (see /docs)",
        )
    return None


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
        return _accepted(service.view(task))

    @app.post(UPLOAD_PREFIX, status_code=202, tags=["ingestion"])
    async def ingest_upload(
        request: Request,
        files: Annotated[list[UploadFile], File(description="the documents")],
        corpus: Annotated[
            str | None, Form(description="target corpus (default: KGP_CORPUS)")
        ] = None,
    ) -> dict[str, Any]:
        """Upload documents and ingest them in the background; returns the run id. Files
        that are refused (corrupt, too large, unsupported) are deleted when the run ends; the
        files kept per corpus are limited by serve.upload_quota_bytes."""
        form = await request.form()
        _no_empty_fields(form)
        raw = form.get("corpus")  # FastAPI reads an empty field as unset
        fields = {"corpus": raw if isinstance(raw, str) else corpus}
        UploadRequest.of(files=[upload.filename or "" for upload in files], **fields)
        name = service.platform.corpus_name(
            current().default_corpus("write", corpus, service.settings.corpus)
        )
        stored = await service.call(
            service.store_uploads,
            name,
            [(u.filename or "", lambda f=u: f.file.read(1 << 20)) for u in files],
        )
        task = await service.ingest_uploaded(stored, name)
        return _accepted(service.view(task))

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

    @app.delete("/v1/runs/{run_id}", status_code=202, tags=["ingestion"])
    async def cancel_run(run_id: str) -> dict[str, Any]:
        """Cancel a run (a run id or a task id; started by this server or another on the same
        Neo4j): it stops at its next file as 'cancelled', every source written whole or not at
        all; 409 when it has already ended."""
        return await service.cancel_run(run_id)


def _no_empty_fields(form: Any) -> None:
    """An empty form field is a mistake, not "the default" (FastAPI reads "" as absent)."""
    empty = sorted(
        {key for key, value in form.multi_items() if isinstance(value, str) and not value}
    )
    if empty:
        raise Problem(
            422,
            f"empty form field(s): {', '.join(empty)}",
            kind="invalid-request",
            hint="leave a field out to use its default, or give it a value",
        )


def _accepted(task: dict[str, Any]) -> dict[str, Any]:
    ref = task["id"] or task["task_id"]
    return task | {"run_id": task["id"], "links": {"run": f"/v1/runs/{ref}"}}
