"""Retrieval contexts for unit tests of what applies where: the scope's shape is already known,
so nothing reads a database."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kg_platform.config import Settings


def known_scope_ctx(
    *, sources: int, chunks: int, model: str = "all-MiniLM-L6-v2", **rerank: Any
) -> SimpleNamespace:
    """A context over corpus ``c`` whose scope holds ``sources`` sources and ``chunks`` level-2
    chunks (as :func:`kg_platform.retrieval.strategies.auto.scope_counts` keeps them), with the bundled
    embedder's name ``model`` and ``rerank`` settings overridden."""
    settings = Settings()
    settings = settings.model_copy(update={"rerank": settings.rerank.model_copy(update=rerank)})
    return SimpleNamespace(
        settings=settings,
        graph=SimpleNamespace(),  # never read: the counts below are known
        embedder=SimpleNamespace(model_name=model),
        corpus="c",
        sources=None,
        _scope_counts={("c", None): (sources, chunks)},
    )
