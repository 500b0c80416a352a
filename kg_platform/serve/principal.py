"""Who is asking: the key's name, the corpora it may use and its rights, and the one place that
checks them (:meth:`Principal.require`).

Rights, each implying the ones before it:

- ``read``: search, explain, ask, sources, runs, the corpus list, strategies;
- ``write``: ingest (paths and uploads), drop a corpus, record a search, cancel a run;
- ``admin``: manage keys (today only through the CLI on the server's machine).

A key sees only its corpora (names or fnmatch globs; ``*`` is every corpus). A corpus it may
not see answers exactly as a corpus that does not exist (:func:`corpus_not_found`), never
"forbidden", so a key cannot learn which other corpora exist. Missing *rights* on a corpus it
can see answer 403.

The gate (:mod:`kg_platform.serve.limits`) resolves the principal and keeps it in the ASGI
scope (``scope["state"]["kgp.principal"]``) and in a context variable for the request, which
every :class:`~kg_platform.serve.service.Service` method reads with :func:`current`. MCP tool
calls run in the session's task, not the request's, so :class:`McpPrincipal` (an MCP server
middleware) sets the variable from the HTTP request each message arrived with. With no
principal set (a code path outside the gate) nothing is allowed: :data:`NOBODY`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from kg_platform.corpus_name import corpus_not_found
from kg_platform.serve.problems import Problem

__all__ = [
    "ADMIN",
    "LOCAL",
    "NOBODY",
    "RIGHTS",
    "SCOPE_KEY",
    "McpPrincipal",
    "Principal",
    "acting_as",
    "corpus_not_found",
    "current",
    "from_scope",
]

Right = Literal["read", "write", "admin"]
#: every right, weakest first: each implies those before it
RIGHTS: tuple[Right, ...] = ("read", "write", "admin")
SCOPE_KEY = "kgp.principal"
_GLOB = frozenset("*?[")


def name_a_corpus() -> Problem:
    return Problem(
        422,
        "this key may use only some corpora: name one in the request",
        kind="corpus-required",
        hint="name a corpus: GET /v1/corpora (the MCP tool list_corpora) lists yours",
    )


@dataclass(frozen=True)
class Principal:
    """One caller: a key's name, its corpus patterns and its right."""

    name: str
    corpora: tuple[str, ...]
    right: Right | None

    @property
    def every_corpus(self) -> bool:
        return "*" in self.corpora

    def allows(self, right: Right) -> bool:
        return self.right is not None and RIGHTS.index(self.right) >= RIGHTS.index(right)

    def sees(self, corpus: str) -> bool:
        return self.right is not None and any(fnmatchcase(corpus, p) for p in self.corpora)

    def visible(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if self.sees(n)]

    @property
    def only_corpus(self) -> str | None:
        """The key's one corpus when it names exactly one, without a glob."""
        if len(self.corpora) == 1 and not _GLOB & set(self.corpora[0]):
            return self.corpora[0]
        return None

    def require(self, right: Right, corpus: str | None = None) -> None:
        """Raise unless this caller has ``right`` (on ``corpus`` when one is named).

        A corpus it may not see raises :func:`corpus_not_found` (404, as a missing corpus),
        whatever the right; a visible corpus without the right raises a 403 problem.
        """
        if corpus is not None and not self.sees(corpus):
            raise corpus_not_found(corpus)
        if not self.allows(right):
            what = {"read": "read", "write": "ingest, upload or drop", "admin": "manage keys"}
            raise Problem(
                403,
                f"this key may not {what[right]} (it has the {self.right or 'no'} right)",
                kind="insufficient-rights",
                hint=f"use a key with the {right!r} right (`kgp serve keys add NAME "
                f"--corpora ... --rights {right}` on the server)",
            )

    def corpus_for(self, right: Right, corpus: str | None) -> str | None:
        """``corpus`` checked with :meth:`require`, where None means "every corpus" (search,
        explain, sources): kept for a key of every corpus, its one corpus for a key of one,
        else a 422 asking to name one (never listing them)."""
        if corpus is None and not self.every_corpus:
            corpus = self.only_corpus
            if corpus is None:
                self.require(right)
                raise name_a_corpus()
        self.require(right, corpus)
        return corpus

    def default_corpus(self, right: Right, corpus: str | None, default: str) -> str:
        """``corpus`` checked, where None means the server's default corpus ``default`` (ask,
        ingest): a key of one corpus gets its own; a key that may not see the default gets
        the 422 asking to name one (the same whether or not the default exists)."""
        if corpus is None:
            if not self.every_corpus and self.only_corpus is not None:
                corpus = self.only_corpus
            elif not self.sees(default):
                self.require(right)
                raise name_a_corpus()
            else:
                corpus = default
        self.require(right, corpus)
        return corpus


#: the server's own key (``data_dir/serve/api-key`` or ``KGP_API_KEY``) and the local MCP
#: stdio client: every right over every corpus
ADMIN = Principal("server-key", ("*",), "admin")
LOCAL = Principal("local", ("*",), "admin")
#: no principal resolved: nothing is allowed
NOBODY = Principal("nobody", (), None)

_current: contextvars.ContextVar[Principal] = contextvars.ContextVar(
    "kgp_principal", default=NOBODY
)


def current() -> Principal:
    """The principal of the request being served (:data:`NOBODY` outside the gate)."""
    return _current.get()


@contextmanager
def acting_as(principal: Principal) -> Iterator[None]:
    token = _current.set(principal)
    try:
        yield
    finally:
        _current.reset(token)


def from_scope(scope: MutableMapping[str, Any] | None) -> Principal:
    """The principal the gate stored in an ASGI scope (:data:`NOBODY` if none)."""
    state = (scope or {}).get("state") or {}
    found = state.get(SCOPE_KEY)
    return found if isinstance(found, Principal) else NOBODY


class McpPrincipal:
    """MCP server middleware: each message runs as the principal of the HTTP request that
    carried it (the gate's), or as ``local`` when there is no HTTP request (stdio)."""

    def __init__(self, local: Principal | None) -> None:
        self.local = local

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        request = getattr(ctx, "request", None)
        if request is None:
            principal = self.local or NOBODY
        else:
            principal = from_scope(getattr(request, "scope", None))
        with acting_as(principal):
            return await call_next(ctx)
