"""What sits between the network and the routes, besides the gate: request ids, CORS and the
offline API docs.

- **Request ids.** Every request gets an id (``X-Request-Id`` on the answer; a caller's own
  id is kept when it is a plain token of 8-64 characters). Every problem body carries it as
  ``request_id``, and the server logs an error's internal detail under it
  (:mod:`kg_platform.serve.problems`). An exception no handler knows is answered here (a
  generic 500 with the id) and logged with its traceback.
- **CORS.** Off unless ``serve.cors_origins`` names origins; then Starlette's
  ``CORSMiddleware`` answers their preflights and marks their answers, and other origins get
  no CORS headers (a browser then refuses to hand the answer to their scripts).
- **/docs offline.** Swagger UI's script, style sheet and icon are served by the server itself
  from the ``fastapi-offline`` package (part of the ``serve`` extra), so the page works with no
  Internet access and loads nothing from another host.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_platform.serve.problems import MEDIA_TYPE, Problem, problem_for, request_id_var

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kg_platform.config import ServeSettings

__all__ = ["DOCS_ASSETS", "DOCS_PATHS", "RequestIds", "add_cors", "add_docs"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADER = b"x-request-id"
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{8,64}")

DOCS_PREFIX = "/docs/assets/"
#: file name -> media type of the assets /docs loads
DOCS_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}
#: the asset paths, open like /docs itself
DOCS_PATHS = frozenset(DOCS_PREFIX + name for name in DOCS_ASSETS)


class RequestIds:
    """ASGI middleware, outermost: the request's id in a context variable (copied into the
    SDK's worker threads) and on the answer's ``X-Request-Id`` header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from kg_platform.serve.problems import new_request_id

        given = dict(scope.get("headers") or []).get(HEADER, b"").decode("latin-1")
        rid = given if _SAFE_ID.fullmatch(given) else new_request_id()
        token = request_id_var.set(rid)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                message = {**message, "headers": [*headers, (HEADER, rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:  # answered (if not begun) and logged here
            if started:
                raise
            problem = problem_for(exc)  # a bug: logged with its traceback under the id
            body = problem.encoded(instance=scope.get("path") or None)
            await send_with_id(
                {
                    "type": "http.response.start",
                    "status": problem.status,
                    "headers": [
                        (b"content-type", MEDIA_TYPE.encode()),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send_with_id({"type": "http.response.body", "body": body})
        finally:
            request_id_var.reset(token)


def add_cors(app: Any, cfg: "ServeSettings") -> None:
    """Allow the browser origins of ``serve.cors_origins`` (none by default: no CORS at all)."""
    if not cfg.cors_origins:
        return
    from starlette.middleware.cors import CORSMiddleware

    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(cfg.cors_origins),
        allow_methods=["GET", "POST", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "X-Request-Id"],
        expose_headers=["X-Request-Id", "Retry-After"],
        allow_credentials=False,
        max_age=600,
    )


def _assets_dir() -> Path | None:
    try:
        import fastapi_offline
    except ImportError:
        return None
    return Path(fastapi_offline.__file__).resolve().parent / "static"


def add_docs(app: "FastAPI") -> None:
    """``/docs`` (Swagger UI) and ``/docs/oauth2-redirect`` with every asset served from here;
    build the app with ``docs_url=None`` so FastAPI's CDN page is not there."""
    from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
    from fastapi.responses import FileResponse, HTMLResponse

    assets = _assets_dir()

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_js_url=DOCS_PREFIX + "swagger-ui-bundle.js",
            swagger_css_url=DOCS_PREFIX + "swagger-ui.css",
            swagger_favicon_url=DOCS_PREFIX + "favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(DOCS_PREFIX + "{name}", include_in_schema=False)
    async def asset(name: str) -> FileResponse:
        if name not in DOCS_ASSETS:
            raise Problem(404, f"no docs asset {name!r}", hint="open /docs")
        if assets is None or not (assets / name).is_file():
            raise Problem(
                404,
                "the API docs' assets are not installed on this server",
                hint="install the serve extra: pip install -e '.[serve]' in the kg-platform repository",
            )
        return FileResponse(
            assets / name,
            media_type=DOCS_ASSETS[name],
            headers={"cache-control": "public, max-age=86400"},
        )
