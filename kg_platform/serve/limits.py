"""The gate in front of every route: API key, per-client rate limit, request size limit.

Written as one plain ASGI middleware (no FastAPI) so the HTTP API and the MCP server's
streamable-HTTP app share the same rules. Order: the key first (no body is read for a caller
without it), then the rate limit, then the size limit, which refuses a declared
``Content-Length`` above the limit at once and stops a body without one (chunked) as soon as
it has streamed past the limit, so an oversized request is never held in memory.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

from kg_platform.serve.auth import KeyCheck
from kg_platform.serve.problems import MEDIA_TYPE, Problem

__all__ = ["BodyTooLarge", "Gate", "GateRules", "TokenBuckets"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenBuckets:
    """One token bucket per client: ``rate`` tokens a second up to ``burst``; a request takes
    one. Buckets idle long enough to be full again are forgotten, so memory stays bounded."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()
        self._last_sweep = time.monotonic()

    def take(self, client: str) -> float:
        """0 when the request may go on, else the seconds until a token is back."""
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - stamp) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                wait = 0.0
            else:
                self._buckets[client] = (tokens, now)
                wait = (1.0 - tokens) / self.rate
            if now - self._last_sweep > 60.0:
                full_after = self.burst / self.rate
                self._buckets = {
                    c: (t, s) for c, (t, s) in self._buckets.items() if now - s < full_after
                }
                self._last_sweep = now
        return wait


@dataclass(frozen=True)
class GateRules:
    key: KeyCheck
    buckets: TokenBuckets
    max_body_bytes: int
    #: paths answered without the key (health and readiness probes, the API docs)
    open_paths: frozenset[str] = frozenset()
    #: path prefixes that take uploads, with their own (larger) size limit
    upload_prefixes: tuple[str, ...] = ()
    max_upload_bytes: int = 0


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a body streams past its limit. An ``HTTPException`` so a
    framework that reads the body (FastAPI) passes it on instead of calling it a parse error."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.status, problem.detail)
        self.problem = problem


class Gate:
    """ASGI middleware applying :class:`GateRules` to every HTTP request."""

    def __init__(self, app: ASGIApp, rules: GateRules) -> None:
        self.app, self.rules = app, rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rules = self.rules
        path: str = scope.get("path", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        authorization = headers.get("authorization")
        if path not in rules.open_paths and not rules.key.accepts(authorization):
            await _answer(
                send,
                Problem(
                    401,
                    "this endpoint needs the API key",
                    hint="send 'Authorization: Bearer KEY'; `kgp serve key` prints the key "
                    "on the server's machine (or set KGP_API_KEY there)",
                    headers={"www-authenticate": 'Bearer realm="kg-platform"'},
                ),
                path,
            )
            return
        wait = rules.buckets.take(_client_id(scope, authorization))
        if wait > 0:
            await _answer(
                send,
                Problem(
                    429,
                    "rate limit exceeded for this client",
                    hint="slow down, or raise KGP_SERVE__RATE_PER_S / KGP_SERVE__RATE_BURST on "
                    "the server",
                    headers={"retry-after": str(max(1, math.ceil(wait)))},
                ),
                path,
            )
            return
        limit = (
            rules.max_upload_bytes
            if rules.upload_prefixes and path.startswith(rules.upload_prefixes)
            else rules.max_body_bytes
        )
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _answer(send, _too_large(limit), path)
            return
        await self._capped(scope, receive, send, limit, path)

    async def _capped(
        self, scope: Scope, receive: Receive, send: Send, limit: int, path: str
    ) -> None:
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(_too_large(limit))
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLarge:
            if not started:
                await _answer(send, _too_large(limit), path)


def _too_large(limit: int) -> Problem:
    return Problem(
        413,
        f"the request body is larger than this endpoint's limit of {limit} bytes",
        hint="send less (upload files in several requests), or raise KGP_SERVE__MAX_BODY_BYTES "
        "/ KGP_SERVE__MAX_UPLOAD_BYTES on the server",
    )


def _client_id(scope: Scope, authorization: str | None) -> str:
    """Whom the rate limit counts: the key's holder (hashed), else the peer address."""
    if authorization:
        return "key:" + hashlib.sha256(authorization.encode()).hexdigest()[:16]
    client = scope.get("client") or ("?", 0)
    return f"ip:{client[0]}"


async def _answer(send: Send, problem: Problem, path: str) -> None:
    body = problem.encoded(instance=path)
    headers = [
        (b"content-type", MEDIA_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in problem.headers.items()),
    ]
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
