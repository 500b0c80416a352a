"""Citation metadata for chunks: source title and URI, section path, page (one graph read)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kg_platform.reasoning.types import Evidence

if TYPE_CHECKING:
    from kg_platform.graph import GraphClient
    from kg_platform.retrieval.base import RetrievedItem


def enrich(graph: "GraphClient", evidence: list[Evidence]) -> list[Evidence]:
    """The same evidence with source/section/page filled in from the graph (text kept)."""
    if not evidence:
        return evidence
    rows = {
        r["chunk_id"]: r
        for r in graph.read(
            "reasoning/chunk_evidence", ids=list(dict.fromkeys(e.chunk_id for e in evidence))
        )
    }
    out = []
    for ev in evidence:
        r = rows.get(ev.chunk_id)
        if r is None:
            out.append(ev)
            continue
        out.append(
            replace(
                ev,
                text=ev.text or r["text"] or "",
                source_id=r["source_id"] or ev.source_id,
                source_title=r["source_title"] or ev.source_title,
                source_uri=r["source_uri"] or ev.source_uri,
                section=r["section"] or ev.section,
                page=r["page"] if r["page"] is not None else ev.page,
                level=r["level"] if r["level"] is not None else ev.level,
            )
        )
    return out


def from_items(items: "list[RetrievedItem]", via: str) -> list[Evidence]:
    """Evidence from a strategy's ranked items (chunk items only carry a chunk id)."""
    return [
        Evidence(
            chunk_id=it.id,
            text=it.text,
            score=it.score,
            source_id=it.source_id,
            source_title=it.source_title,
            section=it.section_title,
            page=it.page,
            level=it.level,
            via=via,
        )
        for it in items
    ]
