"""Explanations of retrieval results: which query found each item, its per-level / per-layer
score breakdown, the nodes on its path, and a Cypher snippet that shows that subgraph in Neo4j
Browser (``kgp retrieve ... --explain``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from kg_platform.graph.cypher import cypher
from kg_platform.retrieval.base import RetrievedItem

SUBGRAPH_QUERY = "retrieval/explain_subgraph"


def subgraph_ids(items: Sequence[RetrievedItem]) -> list[str]:
    """Every node id on the results' paths, in first-seen order, then their sources (whose
    REFERENCES edges show which result names another's title)."""
    ids: list[str] = []
    for it in items:
        ids.extend([it.id, *it.path])
    ids.extend(it.source_id or "" for it in items)
    return list(dict.fromkeys(i for i in ids if i))


def browser_snippet(items: Sequence[RetrievedItem]) -> str:
    """``:param`` line + the named subgraph query, ready to paste into Neo4j Browser."""
    # The ids are our own content hashes; json.dumps quotes them as Cypher string literals for the
    # :param command only (the query itself still takes $ids as a parameter).
    return f":param ids => {json.dumps(subgraph_ids(items))};\n{cypher(SUBGRAPH_QUERY)};"


def explain_lines(items: Sequence[RetrievedItem]) -> list[str]:
    lines = []
    for rank, it in enumerate(items, 1):
        lines.append(
            f"#{rank} {it.kind} {it.id} level={it.level} score={it.score:.4f} query={it.query}"
        )
        if it.breakdown:
            parts = ", ".join(
                f"{k}={v:.3f}"
                for k, v in it.breakdown.items()
                if not k.startswith(("seed:", "entity:"))
            )
            lines.append(f"    breakdown: {parts}")
            seeds = [k[5:] for k in it.breakdown if k.startswith("seed:")]
            hops = [k[7:] for k in it.breakdown if k.startswith("entity:")]
            if seeds or hops:
                lines.append(
                    "    entity hops: "
                    + "; ".join(
                        [f"{name} (named by the question)" for name in seeds]
                        + [f"{name} (shared with a chunk the walk reached)" for name in hops]
                    )
                )
            if "fixed_level" in it.breakdown:
                lines.append(
                    f"    note: no trained router for this corpus; fixed level "
                    f"{int(it.breakdown['fixed_level'])} was used"
                )
        if it.path:
            lines.append(f"    path: {' -> '.join(it.path)}")
    return lines
