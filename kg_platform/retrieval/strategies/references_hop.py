"""The REFERENCES hop: candidates reached from the walk's top chunks through the titles their
sources name (``(:Source)-[:REFERENCES]-(:Source)``, ingest/references.py).

A bridge passage of a multi-hop question often names the article the second hop is in, by its
title; that article shares few words with the question, so neither BM25 nor the question's
vector finds it, and the entity walk only when the two passages share an extracted entity.
With ``tuning.entity_graph.references_top = N`` the sources that the walk's first N chunks' sources
name (or are named by) are placed right after the chunk that links them (moved up when the walk
ranked them lower, brought in with their first chunk when it did not reach them), so the rerank
sees them. On by default (``references_top = 4``, ``references_per = 2``, set before measuring;
what they do on the multi-hop dev sets is in lab/results/2026-12-02/references-hop/).
"""

from __future__ import annotations

from kg_platform.retrieval.base import RetrievalContext, RetrievedItem

__all__ = ["QUERY", "add_referenced"]

QUERY = "retrieval/references_neighbours"


def add_referenced(
    ctx: RetrievalContext, items: list[RetrievedItem], top: int, per: int
) -> list[RetrievedItem]:
    """``items`` with the REFERENCES neighbours of the first ``top`` items' sources placed right
    after the item that links them: a neighbour already ranked lower moves up (its best-ranked
    chunk), one not among ``items`` comes in with its first chunk; one ranked higher stays."""
    parents = [it for it in items[:top] if it.source_id]
    if not parents or not ctx.corpus:
        return items
    rows = ctx.graph.read(
        QUERY,
        rows=[{"parent": it.id, "source": it.source_id} for it in parents],
        have=sorted({it.source_id for it in parents if it.source_id}),
        corpus=ctx.corpus,
        per=per,
    )
    rank = {it.id: i for i, it in enumerate(items)}
    first_of: dict[str, int] = {}
    for i, it in enumerate(items):
        if it.source_id and it.source_id not in first_of:
            first_of[it.source_id] = i
    score = {it.id: it.score for it in parents}
    moves: dict[str, list[RetrievedItem]] = {}
    taken: set[str] = set()
    for r in rows:
        sid = r["source_id"]
        if r["id"] is None or sid in taken:
            continue
        at = first_of.get(sid)
        if at is not None and at < rank[r["parent"]]:
            continue  # ranked above the chunk that links it already
        taken.add(sid)
        if at is not None:
            moves.setdefault(r["parent"], []).append(items[at])
            continue
        moves.setdefault(r["parent"], []).append(
            RetrievedItem(
                id=r["id"],
                text=r["text"] or "",
                score=score.get(r["parent"], 0.0),
                kind="chunk",
                level=r["level"],
                source_id=sid,
                source_title=r["source_title"],
                section_title=r["section_title"],
                page=r["page"],
                tokens=r["tokens"],
                breakdown={"references_mentions": float(r["mentions"] or 0)},
                path=[r["parent"], sid, r["id"]],
                query=QUERY,
            )
        )
    if not moves:
        return items
    moved = {it.id for group in moves.values() for it in group}
    out: list[RetrievedItem] = []
    for it in items:
        if it.id in moved:
            continue
        out.append(it)
        out.extend(moves.get(it.id, []))
    return out
