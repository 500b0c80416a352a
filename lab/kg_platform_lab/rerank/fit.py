"""Fit the late rerank's weights per strategy by grid search on the metric itself.

For each strategy, every weight combination of the grid reorders each training question's
candidates exactly as the product's rerank would (:func:`kg_platform.retrieval.rerank.late_interaction
.combine`, the same tie-break), the ranking is deduplicated and cut at each token budget as
``kgp lab eval`` cuts it, and the mean evidence (or paragraph) recall over the budgets is the
objective. Four weights and a few thousand questions leave little room to overfit, but the
result is only shipped where it also wins on questions it never saw (``kgp lab eval`` on
``bench/longdoc`` and ``bench/dev``), which this module does not decide.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_platform.retrieval.rerank.late_interaction import combine
from kg_platform.retrieval.rerank.weights import LateWeights
from kg_platform_lab.evaluation.harness import cut_at, score_example, to_ranking
from kg_platform.retrieval.base import RetrievedItem
from kg_platform_lab.rerank.pools import Pool

#: the unfitted rule the product used before: min-max cosine + min-max MaxSim
FIXED = LateWeights()
#: cosine is fixed at 1 (only ratios matter). MaxSim's range reaches 20 (cosine then barely
#: counts) because fits on QASPER's train split kept landing on the top of smaller grids.
GRID = {
    "maxsim": (1.0, 2.0, 4.0, 6.0, 10.0, 20.0),
    "retrieval": (0.0, 0.5, 1.0, 2.0),
    "rank": (0.0, 0.5, 1.0),
}


def rerank_order(pool: Pool, weights: LateWeights | None, n: int) -> list[int]:
    """Candidate indices in the order the product's late rerank returns them (``None``: the
    strategy's own order, no rerank)."""
    if weights is None:
        return list(range(len(pool.ids)))
    m = min(n, len(pool.cosine))
    scores = combine(
        weights,
        np.asarray(pool.cosine[:m]),
        np.asarray(pool.maxsim[:m]),
        np.asarray(pool.scores[:m]),
    )
    return order_by_score(scores, len(pool.ids))


def order_by_score(scores: np.ndarray, total: int) -> list[int]:
    """Indices of the first ``len(scores)`` candidates by score, best first, ties kept in the
    strategy's order (the product's tie-break), then the unscored rest in their order."""
    head = sorted(range(len(scores)), key=lambda i: (-round(float(scores[i]), 9), i))
    return head + list(range(len(scores), total))


@dataclass
class Scorer:
    """Recall of a pool's ordering at the budgets, memoised by ordering (most weight
    combinations leave most questions' cut unchanged)."""

    examples: dict[tuple[str, str], Any]
    budgets: Sequence[int]
    _memo: dict[tuple[str, str, str, tuple[int, ...]], tuple[float, ...]] = field(
        default_factory=dict
    )

    def recall(self, pool: Pool, order: list[int]) -> tuple[float, ...]:
        key = (pool.dataset, pool.question_id, pool.strategy, tuple(order))
        if key not in self._memo:
            ex = self.examples[(pool.dataset, pool.question_id)]
            items = [RetrievedItem(id=pool.ids[i], text=pool.texts[i], score=0.0) for i in order]
            ranking = to_ranking(items)
            self._memo[key] = tuple(
                score_example(ex, cut_at(ranking, 5, b)).paragraph_recall for b in self.budgets
            )
        return self._memo[key]

    def mean(self, pools: Iterable[Pool], weights: LateWeights | None, n: int) -> tuple[float, ...]:
        rows = [self.recall(p, rerank_order(p, weights, n)) for p in pools]
        return tuple(float(v) for v in np.mean(np.asarray(rows), axis=0)) if rows else ()


def grid(grid: dict[str, Sequence[float]] = GRID) -> list[LateWeights]:
    names = list(grid)
    return [
        LateWeights(cosine=1.0, **dict(zip(names, values, strict=True)))
        for values in itertools.product(*(grid[k] for k in names))
    ]


@dataclass
class StrategyFit:
    strategy: str
    questions: int
    n_candidates: int
    best: LateWeights
    best_recall: tuple[float, ...]
    fixed_recall: tuple[float, ...]
    none_recall: tuple[float, ...]
    per_dataset: dict[str, dict[str, tuple[float, ...]]]

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "questions": self.questions,
            "n_candidates": self.n_candidates,
            "weights": self.best.to_dict(),
            "recall_fitted": self.best_recall,
            "recall_fixed": self.fixed_recall,
            "recall_none": self.none_recall,
            "per_dataset": self.per_dataset,
        }


def fit_strategy(
    strategy: str,
    pools: list[Pool],
    scorer: Scorer,
    n: int,
    candidates: list[LateWeights] | None = None,
) -> StrategyFit:
    """The grid's best weights for one strategy's pools (objective: mean recall over the
    scorer's budgets, averaged over datasets so each dataset weighs the same)."""
    by_dataset: dict[str, list[Pool]] = defaultdict(list)
    for p in pools:
        by_dataset[p.dataset].append(p)

    def objective(w: LateWeights | None) -> tuple[float, tuple[float, ...]]:
        per = [scorer.mean(ps, w, n) for ps in by_dataset.values()]
        overall = tuple(float(v) for v in np.mean(np.asarray(per), axis=0))
        return float(np.mean(overall)), overall

    best_w, (best_obj, best_rec) = FIXED, objective(FIXED)
    for w in candidates or grid():
        obj, rec = objective(w)
        if obj > best_obj + 1e-12:
            best_w, best_obj, best_rec = w, obj, rec
    return StrategyFit(
        strategy=strategy,
        questions=len(pools),
        n_candidates=n,
        best=best_w,
        best_recall=best_rec,
        fixed_recall=objective(FIXED)[1],
        none_recall=objective(None)[1],
        per_dataset={
            d: {
                "fitted": scorer.mean(ps, best_w, n),
                "fixed": scorer.mean(ps, FIXED, n),
                "none": scorer.mean(ps, None, n),
            }
            for d, ps in sorted(by_dataset.items())
        },
    )
