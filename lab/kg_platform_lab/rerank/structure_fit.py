"""Fitting the document rerank (``kgp lab rerank fit-structure``).

Each pool's first candidates get the product's features
(:func:`kg_platform.retrieval.rerank.structure.features`, their places read from the corpus the
pools came from), labelled 1 where the candidate holds a gold evidence sentence (as the query
head is trained). A logistic regression with an L2 penalty (``0.5 / C * |w|^2``, intercept free)
is fitted by Newton's method: 13 weights, thousands of lists, deterministic, no solver to
install. Lists with no positive or only positives teach nothing about order and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg_platform.retrieval.rerank.structure import FEATURES, StructureModel, features, places
from kg_platform_lab.rerank.fit import Scorer, order_by_score
from kg_platform_lab.rerank.pools import Pool
from kg_platform_lab.rerank.query_head import labels

CANDIDATES = 30


@dataclass
class FeatureList:
    """One pool's first candidates as the product's features."""

    pool: Pool
    x: np.ndarray

    @property
    def late(self) -> np.ndarray:
        """The fixed sum's scores (the first feature)."""
        return self.x[:, FEATURES.index("late")]


def feature_lists(pools: Sequence[Pool], graph: Any, n: int = CANDIDATES) -> list[FeatureList]:
    """The features of each pool's first ``n`` candidates (those with late scores), their
    places read from ``graph`` in batches."""
    ids = sorted({i for p in pools for i in p.ids[: min(n, len(p.cosine))]})
    found: dict[str, dict[str, Any] | None] = {}
    for start in range(0, len(ids), 2000):
        part = ids[start : start + 2000]
        found.update(zip(part, places(part, graph)))
    out = []
    for p in pools:
        m = min(n, len(p.cosine))
        x = features(
            np.asarray(p.cosine[:m]), np.asarray(p.maxsim[:m]), [found[i] for i in p.ids[:m]]
        )
        out.append(FeatureList(p, x))
    return out


def training_matrix(
    lists: Sequence[FeatureList], examples: Mapping[tuple[str, str], Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Stacked features and labels of the lists that hold both a positive and a negative."""
    xs, ys = [], []
    for fl in lists:
        y = labels(fl.pool, examples[(fl.pool.dataset, fl.pool.question_id)], len(fl.x))
        if any(y) and not all(y):
            xs.append(fl.x)
            ys.extend(y)
    if not xs:
        raise ValueError("no pool holds both a gold and a non-gold candidate: nothing to fit")
    return np.vstack(xs), np.asarray(ys, dtype=np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = 1.0, steps: int = 50) -> StructureModel:
    """L2-penalised logistic regression by Newton's method (the intercept is not penalised)."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], 1.0 / c)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return StructureModel(w[:-1].copy(), float(w[-1]))


def recall(
    lists: Sequence[FeatureList], scorer: Scorer, model: StructureModel | None
) -> list[float]:
    """Mean evidence recall at the scorer's budgets with the lists ordered by ``model``
    (``None``: the fixed cosine + MaxSim sum)."""
    rows = []
    for fl in lists:
        s = fl.late if model is None else model.scores(fl.x)
        rows.append(scorer.recall(fl.pool, order_by_score(s, len(fl.pool.ids))))
    return [round(float(v), 4) for v in np.mean(np.asarray(rows), axis=0)] if rows else []


__all__ = ["CANDIDATES", "FEATURES", "FeatureList", "feature_lists", "fit_logistic", "recall"]
