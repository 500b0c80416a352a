"""``PROFILE`` the Cypher a strategy runs: where its database hits go.

:class:`RecordingGraph` stands in for the :class:`~kg_platform.graph.GraphClient` a strategy
reads through and remembers every named statement and its parameters; :func:`profile_calls` runs
those statements again under ``PROFILE`` and sums the plan: rows, database hits, and the
operators with the most hits. ``kgp lab bench retrieve --profile`` prints this next to the latency
table, so a slow formulation is found from its plan, not guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg_platform.graph.cypher import cypher

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient


class RecordingGraph:
    """A graph client that records the named statements read through it (writes pass through)."""

    def __init__(self, graph: "GraphClient") -> None:
        self.graph = graph
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def read(self, name: str, **params: Any) -> list[Any]:
        self.calls.append((name, params))
        return self.graph.read(name, **params)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.graph, attr)


@dataclass
class Profile:
    """The summed ``PROFILE`` of one strategy call (every statement it ran)."""

    statements: list[str]
    db_hits: int = 0
    rows: int = 0
    operators: dict[str, int] = field(default_factory=dict)  # operator type -> db hits

    def top(self, n: int = 3) -> list[tuple[str, int]]:
        return sorted(self.operators.items(), key=lambda kv: -kv[1])[:n]

    def to_dict(self) -> dict[str, Any]:
        return {
            "statements": self.statements,
            "db_hits": self.db_hits,
            "rows": self.rows,
            "top_operators": [{"operator": op, "db_hits": hits} for op, hits in self.top(5)],
        }


def _walk(plan: dict[str, Any], into: Profile) -> None:
    op = str(plan.get("operatorType", "?")).split("@")[0]
    hits = int(plan.get("dbHits", 0) or 0)
    into.db_hits += hits
    into.operators[op] = into.operators.get(op, 0) + hits
    for child in plan.get("children", []) or []:
        _walk(child, into)


def profile_calls(graph: "GraphClient", calls: list[tuple[str, dict[str, Any]]]) -> Profile:
    """Run every recorded statement under ``PROFILE`` (read access) and sum the plans."""
    out = Profile(statements=[name for name, _ in calls])
    with graph.driver.session(database=graph.database, default_access_mode="READ") as session:
        for name, params in calls:
            result = session.run("PROFILE " + cypher(name), **params)
            out.rows += len(list(result))
            summary = result.consume()
            if summary.profile:
                _walk(summary.profile, out)
    return out
