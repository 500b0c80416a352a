"""``--explain`` lines for the REFERENCES edges behind a retrieval's results: which result's
source names another result's title (a chain the ranking returned whole), and which titles
outside the results each one names (where a missing hop may sit)."""

from __future__ import annotations

from collections.abc import Sequence

from kg_platform.graph.client import GraphClient
from kg_platform.retrieval.base import RetrievedItem

__all__ = ["reference_lines"]

QUERY = "retrieval/result_references"


def reference_lines(
    graph: GraphClient, items: Sequence[RetrievedItem], *, outside: int = 3
) -> list[str]:
    """Lines naming the REFERENCES edges that leave the results' sources (none: no lines)."""
    rank: dict[str, int] = {}
    for i, it in enumerate(items, 1):
        if it.source_id:
            rank.setdefault(it.source_id, i)
    if not rank:
        return []
    rows = graph.read(QUERY, ids=list(rank), limit=outside)
    if not rows:
        return []
    lines = ["references (a result's source names another source's title):"]
    for row in sorted(rows, key=lambda r: rank.get(r["id"], 0)):
        here = f"#{rank.get(row['id'], 0)} {row['title']!r}"
        for x in row["inside"]:
            lines.append(
                f"    {here} -> #{rank.get(x['id'], 0)} {x['title']!r} "
                f"(names it {x['mentions']}x; both returned)"
            )
        if row["outside"]:
            more = int(row["outside_total"]) - len(row["outside"])
            named = ", ".join(repr(x["title"]) for x in row["outside"])
            lines.append(
                f"    {here} -> {named}"
                + (f" and {more} more" if more > 0 else "")
                + " (not returned)"
            )
    return lines
