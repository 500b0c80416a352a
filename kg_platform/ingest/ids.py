"""Content-derived ids (docs/graph-model.md): 24 hex chars of a sha256 over the id's parts.

A re-run over the same content yields the same ids, so writes are MERGEs, never duplicates. The
scheme itself is :func:`kg_platform.ids.make_id` (shared with the distilled layer).
"""

from __future__ import annotations

from kg_platform.ids import ID_CHARS, make_id

__all__ = ["ID_CHARS", "make_id", "source_id"]


def source_id(corpus: str, uri: str) -> str:
    """Stable across content changes: a changed file keeps its Source node."""
    return make_id("source", corpus, uri)
