"""Content-derived ids (docs/graph-model.md): 24 hex chars of a sha256 over the id's parts.

A re-run over the same content yields the same ids, so writes are MERGEs, never duplicates.
"""

from __future__ import annotations

import hashlib

ID_CHARS = 24


def make_id(*parts: object) -> str:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return digest[:ID_CHARS]


def source_id(corpus: str, uri: str) -> str:
    """Stable across content changes: a changed file keeps its Source node."""
    return make_id("source", corpus, uri)
