"""The MoGG piece graph: SIMILAR edges from BM25 nearest neighbours (MoGG, in the MoG paper).

For each piece u, its ``k_graph`` best other pieces v by BM25(u -> v) are candidates; the pair
u-v becomes an edge when the self-normalised score s(u, v) = BM25(u -> v) / BM25(u -> u) reaches
``t_graph``. An edge is stored once per unordered pair, weighted by max(s(u, v), s(v, u)).

A piece's *choices* are the pieces it picked (its top ``k_graph`` with s >= ``t_graph``); the edge
set is the union of all choices. ``build_full`` computes the graph of a whole corpus, with the
corpus' own BM25 statistics or with frozen ones (``BM25Stats``); with frozen statistics a pair's
score never changes when other pieces come and go, which is what lets the incremental update
(``granularity/incremental.py``) equal a full build. Scores are computed in row blocks, so memory
stays at ``block x n_pieces`` floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kg_platform.granularity.bm25 import BM25Matrix, BM25Stats

__all__ = [
    "SimilarEdge",
    "PieceGraph",
    "build_full",
    "build_piece_graph",
    "content_order_key",
    "DECIMALS",
]

#: Scores are compared after rounding to this many decimals (deterministic tie-breaking).
DECIMALS = 9
_DECIMALS = DECIMALS


def content_order_key(text: str, source_sha256: str | None, doc_ord: int | None) -> str:
    """Where a piece stands among pieces with the same score: a function of content only.

    Why: a piece's ``k_graph`` choices are cut at the k-th best score, and equal scores are common
    (short boilerplate pieces). Breaking those ties by piece id, which hashes the corpus name and
    the file path, made the same documents give different SIMILAR edges under another name or
    folder. The key is the piece's text, then its source's bytes (sha256) and its place in that
    source, so only pieces of byte-identical sources at the same place (interchangeable ones)
    are left to the id.
    """
    return f"{text}\x1f{source_sha256 or ''}\x1f{doc_ord if doc_ord is not None else -1:09d}"


@dataclass(frozen=True)
class SimilarEdge:
    a: int  # index of the first piece (a < b)
    b: int
    score: float  # max of both directions' self-normalised scores


@dataclass(frozen=True)
class PieceGraph:
    edges: list[SimilarEdge]
    #: per piece, the (index, rounded score) of the pieces it chose, best first
    choices: list[list[tuple[int, float]]]
    stats: BM25Stats


def build_piece_graph(
    texts: Sequence[str], k_graph: int, t_graph: float, block: int = 512
) -> list[SimilarEdge]:
    """The edges of the piece graph of ``texts`` with their own BM25 statistics."""
    return build_full(texts, k_graph, t_graph, block=block).edges


def build_full(
    texts: Sequence[str],
    k_graph: int,
    t_graph: float,
    *,
    stats: BM25Stats | None = None,
    block: int = 512,
) -> PieceGraph:
    """The whole piece graph of ``texts``: edges, every piece's choices, the statistics used.

    Equal scores are broken by the lower index, so callers pass ``texts`` in content order
    (:func:`content_order_key`) for a graph that does not depend on ids.
    """
    n = len(texts)
    stats = stats if stats is not None else BM25Stats.of(texts)
    choices: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    if n < 2 or k_graph <= 0:
        return PieceGraph([], choices, stats)
    bm = BM25Matrix(texts, stats=stats)
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
        rounded = np.round(norm, DECIMALS)
        part = np.argpartition(-rounded, k - 1, axis=1)[:, :k]
        rows = np.arange(stop - start)[:, None]
        kth = rounded[rows, part].min(axis=1)
        tied_rows = np.nonzero((rounded >= kth[:, None]).sum(axis=1) > k)[0]
        for r in tied_rows:
            tied = np.nonzero(rounded[r] >= kth[r])[0]
            part[r] = sorted(tied.tolist(), key=lambda v: (-rounded[r, v], v))[:k]
        keep = (rounded[rows, part] >= t_graph) & (raw[rows, part] > 0)
        for r in range(stop - start):
            picked = [
                (int(part[r, c]), float(rounded[r, part[r, c]]))
                for c in range(part.shape[1])
                if keep[r, c]
            ]
            picked.sort(key=lambda e: (-e[1], e[0]))
            choices[start + r] = picked
            for v, _ in picked:
                u = start + r
                chosen[(min(u, v), max(u, v))] = 0.0  # weight filled in below
    # The weight is the max of both directions even when only one direction chose the pair.
    if chosen:
        pairs = np.array(sorted(chosen), dtype=np.int64)
        for start in range(0, len(pairs), block):
            sub = pairs[start : start + block]
            s_ab = bm.pair_scores(sub[:, 0], sub[:, 1]) / safe_self[sub[:, 0]]
            s_ba = bm.pair_scores(sub[:, 1], sub[:, 0]) / safe_self[sub[:, 1]]
            for (a, b), x, y in zip(sub.tolist(), s_ab, s_ba):
                chosen[(a, b)] = float(max(x, y))
    edges = [SimilarEdge(a, b, s) for (a, b), s in sorted(chosen.items())]
    return PieceGraph(edges, choices, stats)
