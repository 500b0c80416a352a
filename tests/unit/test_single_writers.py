"""Records with one writer: ``(:Trajectory)`` nodes are stored and read only by
``reasoning/trajectory.py``, and a distillation step's clear-write-mark transaction lives only in
``distilling/common.py``. A module that names one of these queries itself is a second copy."""

from __future__ import annotations

from pathlib import Path

import pytest

import kg_platform

PACKAGE = Path(kg_platform.__file__).resolve().parent

OWNERS = {
    "reasoning/store_trajectory": "reasoning/trajectory.py",
    "reasoning/record_retrieval": "reasoning/trajectory.py",
    "reasoning/trajectory": "reasoning/trajectory.py",
    "distill/mark_chunks": "distilling/common.py",
    "distill/clear_chunk_atoms": "distilling/common.py",
    "distill/clear_chunk_entities": "distilling/common.py",
    "distill/clear_chunk_tags": "distilling/common.py",
}


@pytest.mark.parametrize("query", sorted(OWNERS))
def test_only_the_owner_names_the_query(query: str) -> None:
    assert (PACKAGE / "cypher" / f"{query}.cypher").is_file(), f"{query} is not a named query"
    users = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if f'"{query}"' in path.read_text(encoding="utf-8")
    )
    assert users == [OWNERS[query]]
