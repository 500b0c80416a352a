"""Named Cypher statements, loaded from ``kg_platform/cypher/**/*.cypher``.

A statement is addressed by its path without the suffix: ``cypher("retrieval/vector_chunks")``
reads ``cypher/retrieval/vector_chunks.cypher``. Statements take parameters only; nothing in the
platform formats user input into Cypher text. (Index names, which Cypher cannot parameterise,
come from our own schema constants, never from users.)
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from kg_platform.errors import CypherNotFound


def cypher(name: str) -> str:
    """The text of the named statement, with comment-only lines kept (Neo4j ignores them)."""
    return package_statement("kg_platform", name)


@lru_cache(maxsize=None)
def package_statement(package: str, name: str) -> str:
    """The text of statement ``name`` under ``<package>/cypher/`` (the lab keeps its own
    statements in its package and reads them through this, under the same rules)."""
    path = resources.files(package).joinpath("cypher", f"{name}.cypher")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise CypherNotFound(f"no Cypher statement named {name!r} (looked for {path})") from exc
    return text.strip().rstrip(";")


def split_statements(text: str) -> list[str]:
    """Split a migration file into statements at lines that end with ``;``."""
    statements: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        current.append(line)
        if stripped.endswith(";"):
            statements.append("\n".join(current).rstrip().rstrip(";"))
            current = []
    if current:
        statements.append("\n".join(current))
    return statements
