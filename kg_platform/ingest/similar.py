"""Keeps a corpus' SIMILAR edges equal to the BM25 piece graph of its current pieces.

Runs after the sources of a run are written, only when the corpus is marked dirty (a source was
written, replaced or pruned since the last sync, including by a run that crashed before this
step). The graph is computed from a snapshot of the corpus' pieces, then applied in ONE write
transaction that first locks the Corpus node and checks that its ``piece_graph_version`` is still
the one the snapshot was taken at. Every source write bumps that version under the same lock
(``ingest/mark_corpus_dirty``), so:

- if nobody wrote meanwhile, the diff against the stored edges is applied and the corpus is
  marked clean in the same commit (a re-run then writes nothing);
- if another writer landed in the window, nothing is applied and the sync starts over from a new
  snapshot; when that writer's own sync got there first the corpus is already clean and this one
  stops. A stale snapshot can therefore never delete the edges of pieces it did not see, nor mark
  the corpus clean over them.

Why the whole corpus is re-scored rather than only the new pieces: the score is self-normalised
BM25 whose idf (through the piece count N and each term's document frequency) and length norm
(through the mean piece length) are corpus-wide, so one added piece changes every piece's scores,
its self-score and possibly its top-k. Only a full recomputation equals a full rebuild; see
docs/scale.md for the cost and the incremental design this forces.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction

from kg_platform.graph.client import GraphClient
from kg_platform.graph.cypher import cypher
from kg_platform.granularity.piece_graph import build_piece_graph

__all__ = ["sync_piece_graph", "PieceGraphSync", "desired_edges"]

_SCORE_EPS = 1e-6
#: Snapshots tried before giving up while other writers keep changing the corpus; the corpus then
#: stays dirty and the next sync (theirs, or the next run's) brings it up to date.
_ATTEMPTS = 5


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
    #: snapshots discarded because another writer changed the corpus before the apply
    conflicts: int = 0
    #: true when every attempt lost the race; the corpus is left dirty, not wrong
    stale: bool = False


def desired_edges(rows: list[Any], k_graph: int, t_graph: float) -> dict[tuple[str, str], float]:
    """The piece graph of ``rows`` (id, text) keyed by (smaller id, larger id)."""
    ids = [r["id"] for r in rows]
    edges = build_piece_graph([r["text"] or "" for r in rows], k_graph, t_graph)
    out: dict[tuple[str, str], float] = {}
    for e in edges:
        a, b = sorted((ids[e.a], ids[e.b]))
        out[(a, b)] = e.score
    return out


class _Moved(Exception):
    """The corpus version moved past the snapshot: nothing more of this snapshot may land."""


def _locked_batch(
    tx: ManagedTransaction, corpus: str, version: int, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    row = tx.run(cypher("ingest/corpus_graph_lock"), corpus=corpus).single()
    if row is None or row["version"] != version:
        raise _Moved()
    for name, params in statements:
        tx.run(cypher(name), params).consume()


def _apply(
    graph: GraphClient, corpus: str, version: int, desired: dict[tuple[str, str], float]
) -> PieceGraphSync | None:
    """Write the diff and mark clean, or return None when the corpus moved past ``version``.

    Each batch is its own transaction (bounded memory for a first build of a large corpus) that
    locks the Corpus node and re-checks the version, so once a writer has landed no later batch
    of this snapshot can. Batches written before that were right for the corpus they saw, and
    the writer's own sync diffs against them. Two syncs of the same version compute the same
    graph, so their interleaved batches converge on it.
    """
    existing = {
        (r["a"], r["b"]): r["score"] for r in graph.read("ingest/similar_edges", corpus=corpus)
    }
    remove = [{"a": a, "b": b} for (a, b) in existing if (a, b) not in desired]
    upsert = [
        {"a": a, "b": b, "score": s}
        for (a, b), s in desired.items()
        if (a, b) not in existing or abs((existing[(a, b)] or 0.0) - s) > _SCORE_EPS
    ]
    added = sum(1 for r in upsert if (r["a"], r["b"]) not in existing)
    size = graph.batch_size
    steps: list[tuple[str, dict[str, Any]]] = [
        ("ingest/delete_similar", {"rows": remove[i : i + size]})
        for i in range(0, len(remove), size)
    ]
    steps += [
        ("ingest/merge_similar", {"rows": upsert[i : i + size]})
        for i in range(0, len(upsert), size)
    ]
    steps.append(("ingest/corpus_graph_clean", {"corpus": corpus, "edges": len(desired)}))
    try:
        for step in steps:
            graph.in_transaction(lambda tx, st=step: _locked_batch(tx, corpus, version, [st]))
    except _Moved:
        return None
    return PieceGraphSync(
        edges=len(desired), added=added, removed=len(remove), updated=len(upsert) - added
    )


def sync_piece_graph(
    graph: GraphClient, corpus: str, k_graph: int, t_graph: float, *, force: bool = False
) -> PieceGraphSync:
    """Bring the corpus' SIMILAR edges up to date; safe to run from concurrent ingests."""
    conflicts = 0
    compute_s = write_s = 0.0
    for _ in range(_ATTEMPTS):
        # version before pieces: a write committing in between makes the version check fail
        # (a harmless retry); the other order could pair an old snapshot with a new version
        state = graph.read("ingest/corpus_graph_state", corpus=corpus)
        if not state or (not force and not state[0]["dirty"]):
            return PieceGraphSync(skipped=True, conflicts=conflicts)
        version = int(state[0]["version"])
        started = time.perf_counter()
        rows = graph.read("ingest/piece_texts", corpus=corpus)
        desired = desired_edges(rows, k_graph, t_graph)
        compute_s += time.perf_counter() - started
        started = time.perf_counter()
        done = _apply(graph, corpus, version, desired)
        write_s += time.perf_counter() - started
        if done is not None:
            done.pieces, done.conflicts = len(rows), conflicts
            done.compute_s, done.write_s = compute_s, write_s
            return done
        conflicts += 1
        force = False  # the writer that moved the version marked the corpus dirty itself
    return PieceGraphSync(conflicts=conflicts, stale=True, compute_s=compute_s, write_s=write_s)
