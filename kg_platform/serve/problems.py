"""RFC 9457 problem details for every error the API answers, mapped from the platform's
exception tree (:mod:`kg_platform.errors`) so each carries the platform's ``hint``.

Why a table of classes and not messages: the status must follow what went wrong (a caller's
bad input is 4xx, a database that is down is 503), and the exception class already says that.
An exception outside the tree is a bug: it answers a generic 500 and is logged here with its
traceback; no response ever carries a stack trace.

This module is also the one place that decides what of an error may leave the server
(:func:`public_error`, used by the HTTP answers, the MCP tool errors and the LangChain
retriever alike). Every answer carries a request id; the full internal detail (the Neo4j or
Java text, the Bolt address, a lock holder's host and pid, server paths) is logged here under
that id and never sent. Errors whose messages the platform writes for the user (a misspelt
corpus, an unknown strategy, a bad option) keep them, passed through :func:`scrub` as a safety
net; the database's, the driver's, the LLM endpoint's and the embedder's answer a generic
message that names the request id.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
from http import HTTPStatus
from typing import Any

from kg_platform import errors

__all__ = [
    "MEDIA_TYPE",
    "Problem",
    "PublicError",
    "current_request_id",
    "graph_unavailable",
    "new_request_id",
    "problem_for",
    "public_error",
    "request_id_var",
    "scrub",
    "type_name",
]

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "urn:kg-platform:problem:"

#: the id of the request being answered (set by the request-id middleware, copied into the
#: SDK's worker threads by anyio)
request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "kgp_request_id", default=None
)


def new_request_id() -> str:
    return secrets.token_hex(8)


def current_request_id() -> str:
    """The id of the request being answered, or a fresh one outside a request."""
    return request_id_var.get() or new_request_id()


# most specific first: the first class an exception is an instance of decides
_STATUS: list[tuple[type[errors.KGPError], int]] = [
    (errors.CorpusNotFound, 404),
    (errors.JobLocked, 409),
    (errors.LLMNotConfigured, 422),
    (errors.LLMError, 502),
    (errors.CypherNotFound, 500),
    (errors.SchemaError, 503),
    (errors.GraphError, 503),
    (errors.Neo4jServerError, 503),
    (errors.EmbeddingError, 503),
    (errors.RetrievalError, 422),
    (errors.ConfigError, 422),
    (errors.IngestionError, 422),
    (errors.ParseError, 422),
    (errors.JobError, 422),
    (errors.EvaluationError, 422),
]

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    429: "Too many requests",
    500: "Internal error",
    502: "Upstream error",
    503: "Service unavailable",
    504: "Timed out",
}


def _title(status: int) -> str:
    if status in _TITLES:
        return _TITLES[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def type_name(cls: type[BaseException]) -> str:
    """The problem type of an exception class, in kebab case that keeps acronyms whole
    (``LLMError`` -> ``llm-error``, ``NeedsOCR`` -> ``needs-ocr``)."""
    name = cls.__name__
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


class Problem(Exception):
    """A problem+json answer: raise it from a handler, or build one from an exception.

    Its ``detail`` and ``hint`` are sent as they are: build one only with text meant for the
    caller. It carries the id of the request it answers (``request_id``)."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        kind: str | None = None,
        title: str | None = None,
        hint: str = "",
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.title = title or _title(status)
        self.kind = kind or self.title.lower().replace(" ", "-")
        self.hint = hint
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})
        self.request_id = request_id or current_request_id()

    def body(self, instance: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": TYPE_BASE + self.kind,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "instance": instance or f"urn:kg-platform:request:{self.request_id}",
            "request_id": self.request_id,
        }
        if self.hint:
            out["hint"] = self.hint
        out.update(self.extra)
        return out

    def encoded(self, instance: str | None = None) -> bytes:
        return json.dumps(self.body(instance)).encode()


# --------------------------------------------------------------------------- what may leave
#: text that must never leave the server, whatever error carries it
_INTERNAL = re.compile(
    r"java\.|javax\.|\bat org\.neo4j|Neo\.(?:Client|Transient|Database)Error|Traceback|"
    r"File \"|\bneo4j\.exceptions\b|\bMATCH\s*\(|\bCALL\s+db\.|\bUNWIND\s+\$|\bRETURN\s+\w",
    re.IGNORECASE,
)
_URI = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()]+")
#: an absolute path (not an API route): replaced by its last part
_ABS_PATH = re.compile(r"(?<![\w.:/~-])(?:/(?!v1/|docs\b|openapi\.json)[^\s'\"/:;,()]+){2,}/?")
_HOST_PID = re.compile(r"\b[\w.-]+:\d+:[0-9a-f]{8}\b")

GENERIC_HINT = "retry later; the server's log has the details under this request id"


def scrub(text: str) -> str:
    """``text`` without addresses, absolute server paths (each becomes its last part) or a
    lock holder's ``host:pid:token``; "" when it holds Java, Cypher or driver text."""
    if _INTERNAL.search(text):
        return ""
    text = _URI.sub("(address withheld)", text)
    text = _HOST_PID.sub("(another process)", text)
    return _ABS_PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], text)


_UNAVAILABLE_CAUSES: tuple[type[BaseException], ...] = (OSError,)
try:  # the driver is a core dependency, but the servers must not need it to import this
    from neo4j.exceptions import ServiceUnavailable, SessionExpired

    _UNAVAILABLE_CAUSES = (ServiceUnavailable, SessionExpired, OSError)
except ImportError:  # pragma: no cover
    pass


def graph_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the graph database cannot be reached (as opposed to a statement
    that failed on a server that answers)."""
    if isinstance(exc, errors.Neo4jServerError):
        return True
    if not isinstance(exc, errors.GraphError) or isinstance(exc, errors.CypherNotFound):
        return isinstance(exc, _UNAVAILABLE_CAUSES)
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, _UNAVAILABLE_CAUSES):
            return True
        seen = seen.__cause__ or seen.__context__
    message = str(exc.args[0]) if exc.args else ""
    return "unavailable" in message or "no Neo4j to talk to" in message


class PublicError:
    """What may be said about one error outside the server: status, type, message and hint."""

    __slots__ = ("status", "kind", "detail", "hint", "request_id", "generic")

    def __init__(
        self, status: int, kind: str, detail: str, hint: str, request_id: str, generic: bool
    ) -> None:
        self.status, self.kind, self.detail, self.hint = status, kind, detail, hint
        self.request_id, self.generic = request_id, generic

    def message(self) -> str:
        """One line for a tool error or an exception: detail, hint and the request id."""
        text = self.detail if self.generic else f"{self.detail} (request id {self.request_id})"
        return f"{text} (hint: {self.hint})" if self.hint else text


def _full(exc: BaseException) -> str:
    """The whole internal story of ``exc`` for the log: its message and each cause's."""
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 5:
        text = " ".join(str(seen.args[0] if seen.args else seen).split())
        parts.append(f"{type(seen).__name__}: {text}"[:2000])
        seen = seen.__cause__
    return " <- ".join(parts)


def _generic(exc: errors.KGPError, rid: str) -> tuple[str, str] | None:
    """(detail, hint) for the errors whose own text is internal; None to keep the message."""
    if isinstance(exc, (errors.GraphError, errors.Neo4jServerError)):
        if graph_unavailable(exc):
            return (
                f"the graph database is unavailable; request id {rid}",
                "retry in a few seconds; if it lasts, the server's operator should check "
                "Neo4j (`kgp neo4j status`)",
            )
        return f"the graph database failed while answering; request id {rid}", GENERIC_HINT
    if isinstance(exc, errors.LLMNotConfigured):
        return None
    if isinstance(exc, errors.LLMError):
        return f"the LLM endpoint failed while answering; request id {rid}", GENERIC_HINT
    if isinstance(exc, errors.EmbeddingError):
        return f"the embedding model failed while answering; request id {rid}", GENERIC_HINT
    if isinstance(exc, errors.JobLocked):
        return (
            f"another run is already writing this corpus; request id {rid}",
            "wait for that run to finish (GET /v1/runs), then try again",
        )
    return None


def public_error(exc: BaseException, request_id: str | None = None) -> PublicError:
    """What may be answered for ``exc``, with the full detail logged under the request id.

    The one scrubbing rule for every door: the HTTP API (:func:`problem_for`), the MCP tools
    and the LangChain retriever."""
    rid = request_id or current_request_id()
    if isinstance(exc, Problem):  # written for the caller where it was raised
        return PublicError(exc.status, exc.kind, exc.detail, exc.hint, exc.request_id, False)
    if isinstance(exc, errors.KGPError):
        status = next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)
        message = str(exc.args[0]) if exc.args else type(exc).__name__
        generic = _generic(exc, rid)
        if generic is None:
            kept = scrub(message)
            if kept:
                if status >= 500:
                    log.warning("request %s: %s", rid, _full(exc))
                else:
                    log.info("request %s: %s", rid, _full(exc))
                return PublicError(status, type_name(type(exc)), kept, scrub(exc.hint), rid, False)
            generic = (f"the request failed; request id {rid}", GENERIC_HINT)
        log.warning("request %s: %s", rid, _full(exc))
        detail, hint = generic
        return PublicError(status, type_name(type(exc)), detail, hint, rid, True)
    log.error("request %s: unexpected error while serving a request", rid, exc_info=exc)
    return PublicError(
        500,
        "internal-error",
        f"the server failed while answering this request; request id {rid}",
        "this is a bug in kg-platform; the server log has the details under this request id",
        rid,
        True,
    )


def problem_for(exc: BaseException) -> Problem:
    """The problem that answers ``exc`` (its internal detail logged, never sent)."""
    if isinstance(exc, Problem):
        return exc
    public = public_error(exc)
    headers = {"retry-after": "1"} if public.status == 503 else None
    return Problem(
        public.status,
        public.detail,
        kind=public.kind,
        title=_title(public.status),
        hint=public.hint,
        headers=headers,
        request_id=public.request_id,
    )
