"""Content-derived ids (docs/graph-model.md): 24 hex chars of a sha256 over the id's parts.

A re-run over the same content yields the same ids, so writes are MERGEs, never duplicates. Why a
module of its own at the root: the corpus layer (``kg_platform.ingest.ids``) and the distilled
layer (``kg_platform.distilling``) mint ids by the same scheme, and distillation sits below
ingestion, so the one definition lives below both.
"""

from __future__ import annotations

import hashlib

ID_CHARS = 24


def make_id(*parts: object) -> str:
    """24 hex chars of the sha256 of ``parts`` joined by the unit separator."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return digest[:ID_CHARS]


__all__ = ["ID_CHARS", "make_id"]
