"""Keeps a corpus' SIMILAR edges equal to the BM25 piece graph of its current pieces.

Runs after the sources of a run are written, only when the corpus is marked dirty (a source was
written, replaced or pruned since the last sync, including by a run that crashed before this
step). The graph is recomputed over all pieces of the corpus and only the difference is written,
so new pieces are linked to existing ones, pieces of replaced sources have already lost their
edges with their nodes, and a re-run writes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kg_platform.graph.client import GraphClient
from kg_platform.granularity.piece_graph import build_piece_graph

__all__ = ["sync_piece_graph", "PieceGraphSync"]

_SCORE_EPS = 1e-6


@dataclass
class PieceGraphSync:
    pieces: int = 0
    edges: int = 0
    added: int = 0
    removed: int = 0
    updated: int = 0
    compute_s: float = 0.0
    write_s: float = 0.0
    skipped: bool = False


def sync_piece_graph(graph: GraphClient, corpus: str, k_graph: int, t_graph: float,
                     *, force: bool = False) -> PieceGraphSync:
    state = graph.read("ingest/corpus_graph_state", corpus=corpus)
    if not state or (not force and not state[0]["dirty"]):
        return PieceGraphSync(skipped=True)
    started = time.perf_counter()
    rows = graph.read("ingest/piece_texts", corpus=corpus)
    ids = [r["id"] for r in rows]
    edges = build_piece_graph([r["text"] or "" for r in rows], k_graph, t_graph)
    desired: dict[tuple[str, str], float] = {}
    for e in edges:
        a, b = sorted((ids[e.a], ids[e.b]))
        desired[(a, b)] = e.score
    compute_s = time.perf_counter() - started
    started = time.perf_counter()
    existing = {(r["a"], r["b"]): r["score"] for r in graph.read("ingest/similar_edges",
                                                                 corpus=corpus)}
    remove = [{"a": a, "b": b} for (a, b) in existing if (a, b) not in desired]
    upsert = [{"a": a, "b": b, "score": s} for (a, b), s in desired.items()
              if (a, b) not in existing or abs((existing[(a, b)] or 0.0) - s) > _SCORE_EPS]
    added = sum(1 for r in upsert if (r["a"], r["b"]) not in existing)
    graph.write_batches("ingest/delete_similar", remove)
    graph.write_batches("ingest/merge_similar", upsert)
    graph.write("ingest/corpus_graph_clean", corpus=corpus, edges=len(desired))
    return PieceGraphSync(pieces=len(ids), edges=len(desired), added=added, removed=len(remove),
                          updated=len(upsert) - added, compute_s=compute_s,
                          write_s=time.perf_counter() - started)
