"""The lab's own named Cypher statements, loaded from ``kg_platform_lab/cypher/**/*.cypher``.

The product's statements live in ``kg_platform/cypher/`` and are what a user's graph runs; the
statements only the lab needs (benchmark graph sizes, the langchain peer's clean-up, gold-fact
mapping, the evaluation's corpus check) live here, so the product package carries none of them.
Same rules as the product's: a statement is addressed by its path without the suffix
(``lab_cypher("bench/graph_nodes")``) and takes parameters only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kg_platform.graph.cypher import package_statement

if TYPE_CHECKING:
    from neo4j import Record

    from kg_platform.graph import GraphClient


def lab_cypher(name: str) -> str:
    """The text of the lab's statement ``name``."""
    return package_statement("kg_platform_lab", name)


def lab_read(graph: "GraphClient", name: str, **params: Any) -> list["Record"]:
    """Run the lab's read statement ``name`` with ``params``."""
    return graph.read_raw(lab_cypher(name), **params)


def lab_write(graph: "GraphClient", name: str, **params: Any) -> list["Record"]:
    """Run the lab's write statement ``name`` with ``params``."""
    return graph.write_raw(lab_cypher(name), **params)
