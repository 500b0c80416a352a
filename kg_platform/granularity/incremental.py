"""The incremental piece-graph update: new and re-opened pieces choose, their neighbours re-choose.

Why this equals a full build: with frozen BM25 statistics (``BM25Stats``) the self-normalised score
s(u, v) of two pieces depends only on their own texts, so it never changes when other pieces come
or go. A piece's *choices* (its best ``k_graph`` pieces with s >= ``t_graph``, ties by content) can then
change only when a piece enters or leaves the corpus:

- a *pending* piece (new, replaced, or one whose chosen neighbour was deleted) chooses again among
  its candidates, the pieces that share its rarest terms (found through the fulltext index);
- an existing piece keeps its choices unless a pending piece now beats its ``k``-th one;
- the edge set is the union of all choices, weighted max(s(u, v), s(v, u)) as in a full build.

The candidates are the only approximation: a piece outside a pending piece's candidate list is
never compared with it. With ``piece_graph.candidates`` (default 100) per pending piece, the dev
corpora match a full build exactly (tests/integration/test_piece_graph_sync.py).

This module is pure (numpy on the few pieces involved); ``ingest/similar.py`` reads the pieces
from Neo4j and writes the result back in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kg_platform.granularity.bm25 import BM25Matrix, BM25Stats
from kg_platform.granularity.piece_graph import DECIMALS

__all__ = ["StoredPiece", "IncrementalUpdate", "update_choices"]

Choices = list[tuple[str, float]]


@dataclass(frozen=True)
class StoredPiece:
    id: str
    text: str
    #: the piece's stored choices (id, rounded score), best first; None when never computed
    choices: tuple[tuple[str, float], ...] | None = None
    #: where the piece stands among equal scores (``piece_graph.content_order_key``); "" = by id
    order: str = ""


@dataclass
class IncrementalUpdate:
    #: new choice lists of every pending piece and of every existing piece whose list changed
    choices: dict[str, Choices] = field(default_factory=dict)
    #: newly chosen pairs (a < b) with their edge weight
    upsert: list[tuple[str, str, float]] = field(default_factory=list)
    #: pairs one side stopped choosing: the edge goes unless the other side still chooses it
    maybe_drop: list[tuple[str, str]] = field(default_factory=list)


def _ranked(entries: Mapping[str, float], k: int, order: Mapping[str, str]) -> Choices:
    """The best ``k`` by score; equal scores by content order, as a full build breaks them."""
    return sorted(entries.items(), key=lambda e: (-e[1], order.get(e[0], ""), e[0]))[:k]


def update_choices(
    pending: Sequence[StoredPiece],
    candidates: Mapping[str, StoredPiece],
    pools: Mapping[str, Collection[str]],
    stats: BM25Stats,
    k_graph: int,
    t_graph: float,
    block: int = 256,
    order: Mapping[str, str] | None = None,
) -> IncrementalUpdate:
    """Choices and edge changes after ``pending`` pieces (re)enter a corpus.

    ``candidates`` are existing, non-pending pieces with their stored choices; ``pools[p]`` the
    candidate ids found for pending piece ``p`` (every pending piece is a candidate of every other
    one as well). ``order`` gives the content order of pieces known only as a stored choice;
    pending pieces and candidates bring their own (``StoredPiece.order``).
    """
    out = IncrementalUpdate()
    if not pending or k_graph <= 0:
        return out
    pending_ids = [p.id for p in pending]
    pending_set = set(pending_ids)
    others = [c for cid, c in candidates.items() if cid not in pending_set]
    universe = list(pending) + others
    index = {p.id: i for i, p in enumerate(universe)}
    ids = [p.id for p in universe]
    rank_order = dict(order or {})
    rank_order.update({p.id: p.order for p in universe})
    bm = BM25Matrix([p.text for p in universe], stats=stats)
    self_scores = bm.self_scores()
    safe_self = np.where(self_scores > 0, self_scores, np.inf)
    n_pending = len(pending)
    p_idx = np.arange(n_pending)

    new_choices: dict[str, Choices] = {}
    # 1. every pending piece chooses among its pool and the other pending pieces
    for start in range(0, n_pending, block):
        stop = min(start + block, n_pending)
        raw = (bm.query[start:stop] @ bm.weights.T).toarray()
        for r in range(stop - start):
            u = start + r
            pool = {index[v] for v in pools.get(ids[u], ()) if v in index}
            pool.update(p_idx.tolist())
            pool.discard(u)
            cols = np.fromiter(pool, dtype=np.int64, count=len(pool))
            s = np.round(raw[r, cols] / safe_self[u], DECIMALS)
            ok = (s >= t_graph) & (raw[r, cols] > 0)
            new_choices[ids[u]] = _ranked(
                {ids[int(c)]: float(v) for c, v in zip(cols[ok], s[ok])}, k_graph, rank_order
            )
    # 2. existing candidates take a pending piece that beats their k-th choice
    n_other = len(others)
    if n_other:
        pending_weights = bm.weights[:n_pending].T
        for start in range(0, n_other, block):
            stop = min(start + block, n_other)
            rows = slice(n_pending + start, n_pending + stop)
            raw = (bm.query[rows] @ pending_weights).toarray()
            for r in range(stop - start):
                v = n_pending + start + r
                s = np.round(raw[r] / safe_self[v], DECIMALS)
                hits = np.nonzero((s >= t_graph) & (raw[r] > 0))[0]
                if len(hits) == 0:
                    continue
                stored = dict(universe[v].choices or ())
                merged = dict(stored)
                for c in hits:
                    merged[ids[int(c)]] = float(s[c])
                ranked = _ranked(merged, k_graph, rank_order)
                if ranked != _ranked(stored, k_graph, rank_order):
                    new_choices[ids[v]] = ranked

    # 3. edge changes: added choices become edges, dropped ones may go
    upsert: set[tuple[str, str]] = set()
    drop: set[tuple[str, str]] = set()
    for pid, chosen in new_choices.items():
        old = {c for c, _ in (universe[index[pid]].choices or ())}
        new = {c for c, _ in chosen}
        for other in new - old:
            upsert.add((min(pid, other), max(pid, other)))
        for other in old - new:
            drop.add((min(pid, other), max(pid, other)))
    if upsert:
        pairs = sorted(upsert)
        a = np.array([index[x] for x, _ in pairs], dtype=np.int64)
        b = np.array([index[y] for _, y in pairs], dtype=np.int64)
        s_ab = bm.pair_scores(a, b) / safe_self[a]
        s_ba = bm.pair_scores(b, a) / safe_self[b]
        out.upsert = [(x, y, float(max(p, q))) for (x, y), p, q in zip(pairs, s_ab, s_ba)]
    out.maybe_drop = sorted(drop - upsert)
    out.choices = new_choices
    return out
