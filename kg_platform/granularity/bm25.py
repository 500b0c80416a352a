"""BM25 over pieces in Python (numpy + scipy.sparse): the MoGG similarity (MoGG, in the MoG paper).

Why in Python rather than through the ``piece_text`` fulltext index: building the piece graph asks
one query per piece against all pieces, i.e. an all-pairs score matrix. As a sparse product
(queries x terms) @ (terms x pieces) it runs in blocks of rows at numpy speed, with no network
round trip per piece and no Lucene query-syntax escaping; the self-score BM25(u -> u) needed for
the normalisation falls out of the same product. One
``db.index.fulltext.queryNodes('piece_text', ...)`` call per piece would instead pay a round trip
and a Lucene query per piece, orders of magnitude slower.

Scoring follows Lucene's BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))), a
query term counted once, tokens = lower-cased word characters minus English stopwords, so scores
are close to what the fulltext index gives the read path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["bm25_tokens", "piece_terms", "BM25Matrix", "BM25Stats", "STOPWORDS"]

STOPWORDS: frozenset[str] = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with he she his her its we you i our your them from has have
    had were been which who whom what when where why how than so do does did can could would should
    may might also about after before over under between both each other some any all more most""".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)


def bm25_tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def piece_terms(text: str) -> str:
    """The tokens of ``text`` joined by spaces (``Piece.terms``, indexed with Lucene's whitespace
    analyzer), so the fulltext candidate search sees exactly the terms BM25 here scores."""
    return " ".join(bm25_tokens(text))


@dataclass(frozen=True)
class BM25Stats:
    """The collection statistics BM25 scores depend on: piece count, mean length, document
    frequency per term.

    Why a value of its own: the incremental piece graph freezes them at its last full build, so
    the score of a pair of pieces never changes when other pieces come and go, and the graph
    built step by step equals a full build with the same statistics. A term the frozen
    statistics have not seen counts as df = 0 (the rarest possible).
    """

    n: int
    avgdl: float
    df: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: Sequence[str]) -> BM25Stats:
        df: dict[str, int] = {}
        total = 0
        for text in texts:
            toks = bm25_tokens(text)
            total += len(toks)
            for tok in set(toks):
                df[tok] = df.get(tok, 0) + 1
        n = len(texts)
        avg = total / n if n and total > 0 else 1.0
        return cls(n=n, avgdl=avg, df=df)


class BM25Matrix:
    """Term weights of a piece collection, ready for all-pairs scoring.

    With ``stats`` the weights use those (frozen) statistics instead of the collection's own, so
    a few pieces scored here get exactly the weights they have inside the whole corpus.
    """

    def __init__(
        self,
        texts: Sequence[str],
        k1: float = 1.2,
        b: float = 0.75,
        stats: BM25Stats | None = None,
    ) -> None:
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        lengths = np.zeros(len(texts), dtype=np.float64)
        for r, text in enumerate(texts):
            toks = bm25_tokens(text)
            lengths[r] = len(toks)
            counts: dict[int, int] = {}
            for tok in toks:
                col = vocab.setdefault(tok, len(vocab))
                counts[col] = counts.get(col, 0) + 1
            for c, n in counts.items():
                rows.append(r)
                cols.append(c)
                vals.append(float(n))
        # imported here: SciPy costs ~0.09 s to import, and the read path (the late rerank's
        # stop words) imports this module without ever building a matrix
        from scipy import sparse

        n_docs, n_terms = len(texts), max(len(vocab), 1)
        tf = sparse.csr_matrix((vals, (rows, cols)), shape=(n_docs, n_terms), dtype=np.float64)
        if stats is None:
            df = np.bincount(np.asarray(cols, dtype=np.int64), minlength=n_terms).astype(np.float64)
            n_stat = float(n_docs)
            avg = float(lengths.mean()) if n_docs and lengths.mean() > 0 else 1.0
        else:
            df = np.zeros(n_terms, dtype=np.float64)
            for term, col in vocab.items():
                df[col] = float(stats.df.get(term, 0))
            n_stat, avg = float(stats.n), float(stats.avgdl)
        idf = np.log(1.0 + (n_stat - df + 0.5) / (df + 0.5))
        # weight(d, t) = idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
        norm = k1 * (1.0 - b + b * lengths / avg)
        coo = tf.tocoo()
        w = idf[coo.col] * coo.data * (k1 + 1.0) / (coo.data + norm[coo.row])
        self.weights = sparse.csr_matrix((w, (coo.row, coo.col)), shape=tf.shape)
        self.query = sparse.csr_matrix((np.ones_like(coo.data), (coo.row, coo.col)), shape=tf.shape)
        self.n = n_docs

    def scores(self, rows: slice) -> np.ndarray:
        """Dense BM25(u -> v) for the pieces u in ``rows`` against every piece v."""
        return (self.query[rows] @ self.weights.T).toarray()

    def pair_scores(self, us: np.ndarray, vs: np.ndarray) -> np.ndarray:
        """BM25(u -> v) for each pair (us[i], vs[i])."""
        if len(us) == 0:
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self.query[us].multiply(self.weights[vs]).sum(axis=1)).ravel()

    def self_scores(self) -> np.ndarray:
        return np.asarray(self.query.multiply(self.weights).sum(axis=1)).ravel()
