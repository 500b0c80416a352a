"""Fixtures for the parser tests: the real bench documents (read-only, never modified)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.data import DOCUMENTS


@pytest.fixture(scope="session")
def docs() -> Path:
    if not DOCUMENTS.is_dir():
        pytest.skip(f"bench documents not found at {DOCUMENTS}")
    return DOCUMENTS


@pytest.fixture(scope="session")
def sources(docs: Path) -> dict[str, dict]:
    """SOURCES.json by relative file name: sha256 and size of every bench document."""
    return {entry["file"]: entry for entry in json.loads((docs / "SOURCES.json").read_text())}


@pytest.fixture(scope="session")
def docs_parsing() -> Path:
    """The parsing bench: documents with a reference conversion (bench/parsing)."""
    from tests.support.data import BENCH

    folder = BENCH / "parsing"
    if not folder.is_dir():
        pytest.skip(f"parsing bench not found at {folder}")
    return folder
