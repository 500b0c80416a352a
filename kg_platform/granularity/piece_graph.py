"""The MoGG piece graph: SIMILAR edges from BM25 nearest neighbours (MoGG, in the MoG paper).

For each piece u, its ``k_graph`` best other pieces v by BM25(u -> v) are candidates; the pair
u-v becomes an edge when the self-normalised score s(u, v) = BM25(u -> v) / BM25(u -> u) reaches
``t_graph``. An edge is stored once per unordered pair, weighted by max(s(u, v), s(v, u)).

The graph is always computed over the whole corpus (all pieces, old and new), so the result does
not depend on the order sources arrived in and a re-run is a no-op; the writer then applies only
the difference to Neo4j. Scores are computed in row blocks, so memory stays at
``block x n_pieces`` floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kg_platform.granularity.bm25 import BM25Matrix

__all__ = ["SimilarEdge", "build_piece_graph"]

#: Scores are compared after rounding to this many decimals (deterministic tie-breaking).
_DECIMALS = 9


@dataclass(frozen=True)
class SimilarEdge:
    a: int  # index of the first piece (a < b)
    b: int
    score: float  # max of both directions' self-normalised scores


def build_piece_graph(
    texts: Sequence[str], k_graph: int, t_graph: float, block: int = 512
) -> list[SimilarEdge]:
    n = len(texts)
    if n < 2 or k_graph <= 0:
        return []
    bm = BM25Matrix(texts)
    self_scores = bm.self_scores()
    safe_self = np.where(self_scores > 0, self_scores, np.inf)  # stopword-only piece: no edges
    k = min(k_graph, n - 1)
    chosen: dict[tuple[int, int], float] = {}
    for start in range(0, n, block):
        stop = min(start + block, n)
        raw = bm.scores(slice(start, stop))
        norm = raw / safe_self[start:stop, None]
        local = np.arange(stop - start)
        norm[local, local + start] = -np.inf  # never your own neighbour
        # top-k by score (rounded, so float noise cannot reorder equal scores), ties broken by
        # the lower piece index. Rows without a tie at the k-th place are handled vectorised;
        # only rows with a tie are sorted one by one.
        rounded = np.round(norm, _DECIMALS)
        part = np.argpartition(-rounded, k - 1, axis=1)[:, :k]
        rows = np.arange(stop - start)[:, None]
        kth = rounded[rows, part].min(axis=1)
        tied_rows = np.nonzero((rounded >= kth[:, None]).sum(axis=1) > k)[0]
        for r in tied_rows:
            tied = np.nonzero(rounded[r] >= kth[r])[0]
            part[r] = sorted(tied.tolist(), key=lambda v: (-rounded[r, v], v))[:k]
        keep = (rounded[rows, part] >= t_graph) & (raw[rows, part] > 0)
        for r, c in zip(*np.nonzero(keep)):
            u, v = start + int(r), int(part[r, c])
            key = (min(u, v), max(u, v))
            chosen[key] = 0.0  # weight filled in below from both directions
    # The weight is the max of both directions even when only one direction chose the pair.
    if chosen:
        pairs = np.array(sorted(chosen), dtype=np.int64)
        for start in range(0, len(pairs), block):
            sub = pairs[start : start + block]
            fwd = np.asarray(
                bm.query[sub[:, 0]].multiply(bm.weights[sub[:, 1]]).sum(axis=1)
            ).ravel()
            bwd = np.asarray(
                bm.query[sub[:, 1]].multiply(bm.weights[sub[:, 0]]).sum(axis=1)
            ).ravel()
            s_ab = fwd / safe_self[sub[:, 0]]
            s_ba = bwd / safe_self[sub[:, 1]]
            for (a, b), x, y in zip(sub.tolist(), s_ab, s_ba):
                chosen[(a, b)] = float(max(x, y))
    return [SimilarEdge(a, b, s) for (a, b), s in sorted(chosen.items())]
