"""Embeddings as Cypher parameters, without paying for the driver's debug log.

Why: the neo4j Python driver (6.4, ``_bolt5.run``) builds the text of its debug line for every
query, ``" ".join(map(repr, (query, parameters, extra)))``, before the logger decides the line is
not wanted. ``repr`` of a float costs about a microsecond, so every embedding sent pays for
hundreds of them, holding the GIL, for nothing (the lab's record, 2026-11-28/ingest-cpu, has the
measurement). A :class:`VectorParam` is a plain ``list`` to the driver's packer (Python and Rust
both pack list subclasses as lists) whose ``repr`` does not read its items.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["VectorParam", "vector_param"]


class VectorParam(list[float]):
    """An embedding on its way to Neo4j: a list of floats whose ``repr`` is short."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<vector of {len(self)} floats>"


def vector_param(values: np.ndarray | Iterable[float]) -> VectorParam:
    """``values`` (a numpy vector, a list of floats or any numbers) as a :class:`VectorParam`."""
    if isinstance(values, np.ndarray):
        floats = values if values.dtype.kind == "f" else values.astype(np.float64)
        return VectorParam(floats.tolist())
    if isinstance(values, list):
        return VectorParam(values)  # a C-level copy: the items are floats already
    return VectorParam(float(x) for x in values)
