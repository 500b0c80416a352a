"""The lab's own named Cypher statements, loaded from ``kg_platform_lab/cypher/**/*.cypher``.

The product's statements live in ``kg_platform/cypher/`` and are what a user's graph runs; the
statements only the lab needs (benchmark graph sizes, the langchain peer's clean-up, gold-fact
mapping, the evaluation's corpus check) live here, so the product package carries none of them.
Same rules as the product's: a statement is addressed by its path without the suffix
(``lab_cypher("bench/graph_nodes")``) and takes parameters only.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from kg_platform.errors import CypherNotFound

if TYPE_CHECKING:
    from neo4j import Record

    from kg_platform.graph import GraphClient


@lru_cache(maxsize=None)
def lab_cypher(name: str) -> str:
    """The text of the lab's statement ``name``."""
    path = resources.files("kg_platform_lab").joinpath("cypher", f"{name}.cypher")
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise CypherNotFound(
            f"no lab Cypher statement named {name!r} (looked for {path}); reinstall the lab "
            "(pip install -e lab/)"
        ) from exc
    return text.strip().rstrip(";")


def lab_read(graph: "GraphClient", name: str, **params: Any) -> list["Record"]:
    """Run the lab's read statement ``name`` with ``params``."""
    return graph.read_raw(lab_cypher(name), **params)


def lab_write(graph: "GraphClient", name: str, **params: Any) -> list["Record"]:
    """Run the lab's write statement ``name`` with ``params``."""
    return graph.write_raw(lab_cypher(name), **params)
