"""The gate in front of every route: API key, per-key rate limit, request size limit.

Written as one plain ASGI middleware (no FastAPI) so the HTTP API and the MCP server's
streamable-HTTP app share the same rules. Order: an address with too many failed
authentications is refused (429, a back-off that doubles); then the key (no body is read for a
caller without one), whose principal (:mod:`kg_platform.serve.principal`) the request then
carries; then the rate limit, counted per key *name* (however the header was spelt), or per
address on the open paths; then the size limit, which refuses a declared ``Content-Length``
above the limit at once and stops a body without one (chunked) as soon as it has streamed past
the limit, so an oversized request is never held in memory.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException

from kg_platform.serve.keys import KeyRing, KeysUnavailable, bearer_token
from kg_platform.serve.principal import SCOPE_KEY, Principal, acting_as
from kg_platform.serve.problems import MEDIA_TYPE, Problem

__all__ = ["AuthFailures", "BodyTooLarge", "Gate", "GateRules", "TokenBuckets"]

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


class AuthFailures:
    """Failed authentications per client address: after ``limit`` failures within
    ``window_s`` the address is refused for ``first_block_s`` seconds, doubling with each
    further block (up to ``max_block_s``). Refused means every request, with the right key
    too, so guessing costs the same whatever the guess; nothing is checked while refused.
    An address quiet for a window after its block is forgotten, so memory stays bounded."""

    def __init__(
        self,
        limit: int,
        window_s: float,
        *,
        first_block_s: float = 1.0,
        max_block_s: float = 900.0,
    ) -> None:
        self.limit, self.window_s = limit, window_s
        self.first_block_s, self.max_block_s = first_block_s, max_block_s
        # address -> (failure times within the window, blocks so far, blocked until)
        self._seen: dict[str, tuple[list[float], int, float]] = {}
        self._lock = threading.Lock()
        self._last_sweep = time.monotonic()

    def wait(self, address: str) -> float:
        """0 when ``address`` may try, else the seconds its block still lasts."""
        now = time.monotonic()
        with self._lock:
            entry = self._seen.get(address)
            return max(0.0, entry[2] - now) if entry else 0.0

    def failed(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            times, blocks, until = self._seen.get(address, ([], 0, 0.0))
            if now - max(times[-1] if times else 0.0, until) > self.window_s:
                times, blocks = [], 0  # quiet for a whole window after its block: fresh start
            times = [t for t in times if now - t <= self.window_s] + [now]
            if len(times) >= self.limit:
                block = min(self.max_block_s, self.first_block_s * 2.0**blocks)
                times, blocks, until = [], blocks + 1, now + block
            self._seen[address] = (times, blocks, until)
            if now - self._last_sweep > 60.0:
                self._seen = {
                    a: (ts, b, u)
                    for a, (ts, b, u) in self._seen.items()
                    if now - max(ts[-1] if ts else 0.0, u) <= self.window_s
                }
                self._last_sweep = now


@dataclass(frozen=True)
class GateRules:
    keys: KeyRing
    buckets: TokenBuckets
    failures: AuthFailures
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
        address = _address(scope)
        principal: Principal | None = None
        if path not in rules.open_paths:
            blocked = rules.failures.wait(address)
            if blocked > 0:
                await _answer(
                    send,
                    Problem(
                        429,
                        "too many failed authentications from this address",
                        hint="wait for Retry-After seconds (the wait doubles with each further "
                        "round of failures), then send the right key: 'Authorization: Bearer "
                        "KEY'",
                        headers={"retry-after": str(max(1, math.ceil(blocked)))},
                    ),
                    path,
                )
                return
            token = bearer_token(scope["headers"])
            try:
                principal = await rules.keys.resolve(token) if token else None
            except KeysUnavailable:
                await _answer(
                    send,
                    Problem(
                        503,
                        "the API keys cannot be checked: Neo4j is unavailable",
                        hint="retry shortly; is the server running? `kgp neo4j status`",
                        headers={"retry-after": "1"},
                    ),
                    path,
                )
                return
            if principal is None:
                rules.failures.failed(address)
                await _answer(
                    send,
                    Problem(
                        401,
                        "this endpoint needs an API key",
                        hint="send 'Authorization: Bearer KEY' (one space, the key as given); "
                        "on the server's machine `kgp serve key` prints the server's key and "
                        "`kgp serve keys add` makes keys scoped to corpora",
                        headers={"www-authenticate": 'Bearer realm="kg-platform"'},
                    ),
                    path,
                )
                return
            scope.setdefault("state", {})[SCOPE_KEY] = principal
        wait = rules.buckets.take(f"key:{principal.name}" if principal else f"ip:{address}")
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
        if principal is None:
            await self._capped(scope, receive, send, limit, path)
            return
        with acting_as(principal):
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


def _address(scope: Scope) -> str:
    """The peer's address (a proxy in front makes every client its own address)."""
    client = scope.get("client") or ("?", 0)
    return str(client[0])


async def _answer(send: Send, problem: Problem, path: str) -> None:
    body = problem.encoded(instance=path)
    headers = [
        (b"content-type", MEDIA_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        *((k.encode(), v.encode()) for k, v in problem.headers.items()),
    ]
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
