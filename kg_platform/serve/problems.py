"""RFC 9457 problem details for every error the API answers, mapped from the platform's
exception tree (:mod:`kg_platform.errors`) so each carries the platform's ``hint``.

Why a table of classes and not messages: the status must follow what went wrong (a caller's
bad input is 4xx, a database that is down is 503), and the exception class already says that.
An exception outside the tree is a bug: it answers a generic 500 and is logged here with its
traceback; no response ever carries a stack trace.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from kg_platform import errors

__all__ = ["MEDIA_TYPE", "Problem", "problem_for"]

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "urn:kg-platform:problem:"

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
    404: "Not found",
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


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class Problem(Exception):
    """A problem+json answer: raise it from a handler, or build one from an exception."""

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
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.title = title or _TITLES.get(status, "Error")
        self.kind = kind or self.title.lower().replace(" ", "-")
        self.hint = hint
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def body(self, instance: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": TYPE_BASE + self.kind,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if instance:
            out["instance"] = instance
        if self.hint:
            out["hint"] = self.hint
        out.update(self.extra)
        return out

    def encoded(self, instance: str | None = None) -> bytes:
        return json.dumps(self.body(instance)).encode()


def problem_for(exc: BaseException) -> Problem:
    """The problem that answers ``exc`` (logged with its traceback when it is not ours)."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, errors.KGPError):
        status = next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)
        message = str(exc.args[0]) if exc.args else type(exc).__name__
        if status >= 500:
            log.warning("%s: %s", type(exc).__name__, message)
        return Problem(
            status,
            message,
            kind=_kebab(type(exc).__name__),
            title=_TITLES.get(status, "Error"),
            hint=exc.hint,
        )
    log.error("unexpected error while serving a request", exc_info=exc)
    return Problem(
        500,
        "the server failed while answering this request",
        kind="internal-error",
        hint="this is a bug in kg-platform; the server log has the details",
    )
