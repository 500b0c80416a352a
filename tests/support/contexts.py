"""Retrieval contexts for unit tests of what applies where: the scope's shape is already known,
so nothing reads a database."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kg_platform.config import Settings
from kg_platform.retrieval.base import RetrievalContext
from kg_platform.retrieval.scope import ScopeShape


def known_scope_ctx(
    *, sources: int, chunks: int, model: str = "all-MiniLM-L6-v2", **rerank: Any
) -> RetrievalContext:
    """A context over corpus ``c`` whose scope holds ``sources`` sources and ``chunks`` level-2
    chunks (the shape :meth:`RetrievalContext.shape` keeps, already known), with the bundled
    embedder's name ``model`` and ``rerank`` settings overridden."""
    settings = Settings()
    settings = settings.model_copy(update={"rerank": settings.rerank.model_copy(update=rerank)})
    ctx = RetrievalContext(
        graph=SimpleNamespace(),  # type: ignore[arg-type]  # never read: the shape is known
        embedder=SimpleNamespace(model_name=model),  # type: ignore[arg-type]
        settings=settings,
        corpus="c",
    )
    ctx._shapes[ctx.scope_key()] = ScopeShape(sources, chunks)
    return ctx
