"""API keys scoped to corpora, kept hashed in the graph and shared by every server on it.

A key is ``kgp_`` + ``secrets.token_urlsafe(32)`` (256 random bits). Only its SHA-256 is stored,
as ``(:ApiKey {name, key_hash, corpora, rights, created, revoked_at})`` (migration
``0007_api_keys``: one name and one hash per key). Why a plain SHA-256 and not a slow password
hash (bcrypt, scrypt, argon2): those exist to make guessing a *low-entropy* secret from its hash
expensive. A 256-bit random key cannot be guessed from its hash at any speed, so a slow hash
would only add its cost to every request and make a denial of service cheaper. The same holds
for the server's own key, which must be at least 32 characters (:func:`check_key_text`).

Every ``kgp serve`` / ``kgp mcp --http`` on the database checks keys through its
:class:`KeyRing`: the active keys' hashes, read in one query, refreshed in the background once
older than :data:`TTL_S` (0.5 s) and never used once older than :data:`MAX_AGE_S` (1 s), so a
key added or revoked through one server (or the CLI) holds on every other within a second
(while the table cannot be read, graph keys get 503, the server's own key still works).

Fail fast: a load is one read without the driver's transaction retries
(:meth:`~kg_platform.graph.client.GraphClient.read_once`), so it fails at once on a database
that is gone instead of retrying for ``neo4j.retry_s`` (and, parked in a retry's back-off, keeping
graph keys at 503 for seconds after Neo4j is back); a request waits for a load at most
:data:`WAIT_S`, and not at all once the breaker is open: while it is open
(:class:`~kg_platform.serve.health.GraphHealth`) no load is started and a request whose copy is
too old is answered 503 at once, without touching the driver. A failed load tells the breaker.

Why a cached table and not one lookup per request: a wrong key
then costs no database read (an attacker's guesses cannot load Neo4j), the gate waits on the
database at most twice a second rather than on every request, and the table is small (one row
per key). A request's key is hashed and compared with every active hash in constant time
(``hmac.compare_digest``, no early exit).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from kg_platform.errors import ConfigError, GraphError, KGPError
from kg_platform.graph.cypher import cypher
from kg_platform.serve.principal import ADMIN, LOCAL, NOBODY, RIGHTS, Principal, Right

if TYPE_CHECKING:
    from kg_platform.graph.client import GraphClient
    from kg_platform.serve.health import GraphHealth
    from kg_platform.sdk.platform import KnowledgePlatform

__all__ = [
    "KEY_PREFIX",
    "MIN_KEY_CHARS",
    "TTL_S",
    "KeyRing",
    "KeyStore",
    "KeysUnavailable",
    "bearer_token",
    "check_key_text",
    "ensure_key_schema",
    "key_hash",
    "key_ring",
    "new_key",
]

log = logging.getLogger(__name__)

KEY_PREFIX = "kgp_"
MIN_KEY_CHARS = 32
#: a copy of the key table older than this is refreshed (in the background while it is
#: younger than MAX_AGE_S)
TTL_S = 0.5
#: no request is answered from an older copy: a key revoked (or added) anywhere holds on
#: every server within this long, whether or not the database answers meanwhile
MAX_AGE_S = 1.0
#: how long a request waits for a refresh once the copy is older than MAX_AGE_S (then 503):
#: a database that answers slowly (a loaded machine) is waited for, as the request's own query
#: would be; one that is gone ends the wait at once (the load fails without retries and opens
#: the breaker, and an open breaker ends every wait)
WAIT_S = 5.0
MIGRATION = "api_keys"
GENERATE_HINT = (
    "use a random key of 32 characters or more, e.g. "
    "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`, or unset KGP_API_KEY "
    "to use the key generated in the data dir (`kgp serve key`)"
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_RESERVED = frozenset({ADMIN.name, LOCAL.name, NOBODY.name})
# RFC 7235: credentials = auth-scheme 1*SP token68; one space here, token68 only
_TOKEN68 = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_BEARER = re.compile(r"([Bb][Ee][Aa][Rr][Ee][Rr]) ([A-Za-z0-9._~+/-]+=*)")
_MAX_PATTERN = 200


def new_key() -> str:
    """A fresh key: 256 random bits, URL-safe (a token68, so it fits a Bearer header)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    """The stored form of a key: its SHA-256, hex (see the module docstring for why)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_key_text(key: str, where: str) -> str:
    """``key`` if it can serve as a key (32 characters or more, token68 characters only, so
    a client can send it in a Bearer header), else a :class:`ConfigError` saying how to
    make one. ``where`` names where it came from."""
    if len(key) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the API key from {where} is {len(key)} characters long; it must have at least "
            f"{MIN_KEY_CHARS}",
            hint=GENERATE_HINT,
        )
    if not _TOKEN68.fullmatch(key):
        raise ConfigError(
            f"the API key from {where} holds characters a Bearer header cannot carry",
            hint="use letters, digits and -._~+/ only; " + GENERATE_HINT,
        )
    return key


def bearer_token(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The key of a request's ``Authorization: Bearer KEY`` header, parsed strictly: exactly
    one such header, the scheme ``Bearer`` in any case (RFC 7235), exactly one space, one
    token68 and nothing else. Anything else is no key (None)."""
    found = [v for k, v in headers if k.lower() == b"authorization"]
    if len(found) != 1:
        return None
    match = _BEARER.fullmatch(found[0].decode("latin-1"))
    return match.group(2) if match else None


def _rights(value: str) -> Right:
    if value not in RIGHTS:
        raise ConfigError(
            f"unknown right {value!r}",
            hint="--rights is one of read (search, ask, sources, runs, corpus list), write "
            "(also ingest, upload, drop) or admin (also keys)",
        )
    return value


def _patterns(corpora: Sequence[str]) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(c.strip() for c in corpora))
    if not cleaned or any(not c for c in cleaned):
        raise ConfigError(
            "a key needs at least one corpus, and no empty name",
            hint="--corpora A,B (names or globs such as 'team-*'; '*' is every corpus)",
        )
    for c in cleaned:
        if len(c) > _MAX_PATTERN or "\x00" in c:
            raise ConfigError(
                f"unusable corpus pattern {c[:40]!r}",
                hint=f"corpus names and globs have 1..{_MAX_PATTERN} printable characters",
            )
    return cleaned


def _principal(row: Any) -> Principal | None:
    right = row["rights"]
    if right not in RIGHTS:
        return None  # a record written by something else: never a key
    return Principal(str(row["name"]), tuple(row["corpora"] or ()), right)


def ensure_key_schema(graph: "GraphClient") -> None:
    """Apply the keys' migration (name and hash constraints) if the graph lacks it, without
    the rest of the schema (which needs the embedder: `kgp init` applies that)."""
    from kg_platform.graph.schema import apply_migration, applied_versions, load_migrations

    # the dimension only fills the vector migration, which is not applied here
    (migration,) = [m for m in load_migrations(1) if m.name == MIGRATION]
    if migration.version not in applied_versions(graph):
        apply_migration(graph, migration)


class KeyStore:
    """The ``(:ApiKey)`` records: add, list, revoke, and the active ones for a key ring."""

    def __init__(self, graph: "GraphClient") -> None:
        self.graph = graph

    def add(self, name: str, corpora: Sequence[str], rights: str) -> tuple[str, str]:
        """Make a key; return it (shown once, never stored) and its creation time."""
        if not _NAME.fullmatch(name) or name in _RESERVED:
            raise ConfigError(
                f"unusable key name {name!r}",
                hint="1..64 letters, digits, '.', '_' or '-', starting with a letter or digit "
                f"(not {', '.join(sorted(_RESERVED))})",
            )
        right = _rights(rights)
        patterns = _patterns(corpora)
        ensure_key_schema(self.graph)
        if self.graph.read_raw("MATCH (k:ApiKey {name: $name}) RETURN 1 AS x", name=name):
            raise _duplicate(name)
        key = new_key()
        try:
            rows = self.graph.write_raw(
                cypher("serve/key_add"),
                name=name,
                key_hash=key_hash(key),
                corpora=list(patterns),
                rights=right,
            )
        except GraphError as exc:
            code = getattr(exc.__cause__, "code", "")
            if code == "Neo.ClientError.Schema.ConstraintValidationFailed":
                raise _duplicate(name) from exc
            raise
        return key, str(rows[0]["created"])

    def list(self) -> list[dict[str, Any]]:
        """Every key (revoked ones too): name, corpora, rights, created, revoked_at; never a
        hash or a key."""
        return [
            {
                "name": r["name"],
                "corpora": list(r["corpora"] or ()),
                "rights": r["rights"],
                "created": r["created"],
                "revoked_at": r["revoked_at"],
            }
            for r in self.graph.read("serve/key_list")
        ]

    def revoke(self, name: str) -> str:
        """Revoke the key ``name``; return when. Unknown or already revoked: ConfigError."""
        rows = self.graph.write_raw(cypher("serve/key_revoke"), name=name)
        if not rows:
            raise ConfigError(
                f"there is no API key named {name!r}",
                hint="`kgp serve keys list` shows the keys (names are case-sensitive)",
            )
        if rows[0]["already"]:
            raise ConfigError(
                f"the API key {name!r} was already revoked at {rows[0]['revoked_at']}",
                hint="nothing to do; `kgp serve keys list` shows it revoked",
            )
        return str(rows[0]["revoked_at"])

    def active(self, *, once: bool = False) -> tuple[tuple[str, Principal], ...]:
        """(hash, principal) of every key in force; ``once``: one try, no transaction retries
        (a server's key ring, which must not wait on a database that is gone)."""
        out = []
        rows = (
            self.graph.read_once("serve/key_active")
            if once
            else self.graph.read("serve/key_active")
        )
        for row in rows:
            principal = _principal(row)
            if principal is not None:
                out.append((str(row["key_hash"]), principal))
        return tuple(out)


def _duplicate(name: str) -> ConfigError:
    return ConfigError(
        f"an API key named {name!r} exists already",
        hint="choose another name (revoked keys keep theirs; `kgp serve keys list` shows "
        "them), or revoke it and add the new one under a new name",
    )


class KeysUnavailable(Exception):
    """The key table could not be read recently enough to trust it."""


class KeyRing:
    """What the gate checks keys against: the server's own key (admin over every corpus, no
    database needed) and the graph's active keys (see the module docstring for how fresh).
    ``health``, the server's breaker: while it is open no load is started."""

    def __init__(
        self,
        load: Callable[[], tuple[tuple[str, Principal], ...]],
        *,
        server_key: str | None = None,
        ttl_s: float = TTL_S,
        max_age_s: float = MAX_AGE_S,
        wait_s: float = WAIT_S,
        health: "GraphHealth | None" = None,
    ) -> None:
        self._load = load
        self._health = health
        self._server_hash = key_hash(server_key) if server_key else None
        self.ttl_s, self.max_age_s, self.wait_s = ttl_s, max_age_s, wait_s
        self._entries: tuple[tuple[str, Principal], ...] = ()
        self._stamp = -math.inf  # when the load that produced _entries started
        self._loading: Future[tuple[tuple[str, Principal], ...]] | None = None
        self._loading_since = 0.0
        self._lock = threading.Lock()

    async def resolve(self, token: str) -> Principal | None:
        """The principal of ``token``, or None when it is no key in force.

        Raises :class:`KeysUnavailable` when the key table could not be read for longer than
        :data:`MAX_AGE_S` (the gate answers 503)."""
        digest = key_hash(token)
        if self._server_hash is not None and hmac.compare_digest(digest, self._server_hash):
            return ADMIN
        found = None
        for stored, principal in await self._fresh():
            if hmac.compare_digest(stored, digest):  # every entry compared: no early exit
                found = principal
        return found

    def warm(self) -> None:
        """Start reading the key table now (a server calls this when it is built, so its first
        request does not wait for the driver's first connection)."""
        with self._lock:
            self._refresh(time.monotonic())

    async def _fresh(self) -> tuple[tuple[str, Principal], ...]:
        """The active keys: the copy while younger than the TTL; a copy younger than
        :data:`MAX_AGE_S` while a refresh runs in the background; else the refresh's result,
        awaited for at most :data:`WAIT_S`."""
        import anyio  # the serve extra's; the key store works without it (`kgp serve keys`)

        too_old = time.monotonic() - self._stamp >= self.max_age_s
        if self._health is not None and self._health.degraded and too_old:
            await self._health.hold()  # the 503 below is paced like every open breaker's
        now = time.monotonic()
        with self._lock:
            self._adopt()
            if now - self._stamp < self.ttl_s:
                return self._entries
            if self._degraded():  # the breaker's probe decides when the graph is back
                if now - self._stamp < self.max_age_s:
                    return self._entries
                raise KeysUnavailable
            future = self._refresh(now)
            if now - self._stamp < self.max_age_s:
                return self._entries
        deadline = now + self.wait_s
        while not future.done() and time.monotonic() < deadline and not self._degraded():
            await anyio.sleep(0.002)
        with self._lock:
            self._adopt()
            if time.monotonic() - self._stamp < self.max_age_s:
                return self._entries
        raise KeysUnavailable

    def _degraded(self) -> bool:
        return self._health is not None and self._health.degraded

    def _refresh(self, now: float) -> "Future[tuple[tuple[str, Principal], ...]]":
        """The load in flight, started if there is none (call with the lock held)."""
        if self._loading is None:
            self._loading_since = now
            self._loading = self._start_load()
        return self._loading

    def _adopt(self) -> None:
        """Take a finished load's result, or log its failure (call with the lock held)."""
        future = self._loading
        if future is None or not future.done():
            return
        self._loading = None
        error = future.exception()
        if error is not None:
            log.warning("the API key table could not be read: %s", type(error).__name__)
        elif self._loading_since > self._stamp:
            self._entries, self._stamp = future.result(), self._loading_since

    def _start_load(self) -> "Future[tuple[tuple[str, Principal], ...]]":
        # a daemon thread, not a pool: a load stuck on a dead database must not hold up exit
        future: Future[tuple[tuple[str, Principal], ...]] = Future()

        def run() -> None:
            try:
                future.set_result(self._load())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting request
                if self._health is not None:
                    self._health.failed(exc)  # the graph gone: the breaker opens
                future.set_exception(exc)

        threading.Thread(target=run, name="kgp-keys", daemon=True).start()
        return future


def key_ring(
    platform: "KnowledgePlatform", server_key: str | None, health: "GraphHealth | None" = None
) -> KeyRing:
    """The key ring of a server over ``platform``: its own key and the graph's keys, loaded
    once per refresh without retries; ``health``, the server's breaker (no load while open)."""
    try:  # build the client here, not in the warm-up thread and a request's at once
        platform.graph  # noqa: B018 - the property builds it
    except KGPError:
        pass  # no Neo4j yet: each refresh tries again (the server's own key still works)
    ring = KeyRing(
        lambda: KeyStore(platform.graph).active(once=True), server_key=server_key, health=health
    )
    ring.warm()
    return ring
