"""Paired comparison of two ``kgp lab eval --per-question`` files: is B really ahead of A?

Why this exists: a mean over a few hundred questions moves by chance. On the 81 longdoc tuning
questions one change gained 0.06 evidence recall and then lost 0.02 on the 225 held-out ones
(docs/retrieval.md, session 13). A difference means little without its spread, so this pairs
the questions both files answered (same question id; one strategy from each file) and reports:

* the mean of the metric in each file and their difference ``B - A``;
* a percentile bootstrap interval of that difference (questions resampled with replacement,
  the same resample for both sides, which is what makes it *paired*);
* with ``target``, the share of resamples whose difference reaches it (how often an aim such as
  "+0.08 over the best baseline" would hold on a sample like this one);
* wins, losses and ties: on how many questions B scored above, below or equal to A.

With ``cluster`` (a per-question field, e.g. ``doc_id``) whole clusters are resampled instead
of questions: questions about one paper succeed and fail together, so 81 questions about 30
papers carry about 30 papers' worth of evidence, and the interval should say so.

Nothing here reads Neo4j: it works on the JSONL that ``kgp lab eval --per-question`` writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.errors import EvaluationError
from kg_platform_lab.qa_file import read_qa_rows

__all__ = [
    "DEFAULT_METRICS",
    "PairedComparison",
    "compare_files",
    "paired_bootstrap",
    "read_per_question",
]

DEFAULT_METRICS = ("evidence_recall", "paragraph_recall")  # document QA first, then QA files
_ROW_HINT = "compare files written by kgp lab eval --per-question"
_BLOCK_CELLS = 2_000_000  # resample indices drawn at once (16 MB)


@dataclass(frozen=True)
class PairedComparison:
    """The paired difference ``B - A`` of one metric over the questions both sides answered."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    confidence: float
    resamples: int
    seed: int
    clusters: int | None
    wins: int
    losses: int
    ties: int
    target: float | None = None
    reach_target: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_bootstrap(
    a: Iterable[float],
    b: Iterable[float],
    *,
    metric: str = "score",
    resamples: int = 5000,
    confidence: float = 0.95,
    seed: int = 0,
    target: float | None = None,
    groups: Sequence[str] | None = None,
) -> PairedComparison:
    """Compare paired scores (``a[i]`` and ``b[i]`` belong to the same question); with
    ``groups`` (one label per question) resample whole groups, not questions."""
    xa = np.asarray(list(a), dtype=float)
    xb = np.asarray(list(b), dtype=float)
    if xa.shape != xb.shape:
        raise ValueError(f"paired scores differ in length: {xa.size} and {xb.size}")
    if xa.size == 0:
        raise EvaluationError("no paired questions to compare")
    if resamples < 1:
        raise EvaluationError(f"--resamples must be >= 1, got {resamples}")
    if not 0 < confidence < 1:
        raise EvaluationError(f"--confidence must be between 0 and 1, got {confidence}")
    d = xb - xa
    if groups is None:  # every question its own cluster
        sums, counts = d, np.ones_like(d)
    else:
        labels = list(groups)
        if len(labels) != d.size:
            raise ValueError(f"{len(labels)} group labels for {d.size} questions")
        keys, inverse = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
        sums = np.bincount(inverse, weights=d, minlength=keys.size)
        counts = np.bincount(inverse, minlength=keys.size).astype(float)
    rng = np.random.default_rng(seed)
    # one row of cluster indices per resample; its mean is the drawn clusters' summed
    # differences over their question count. In blocks, so a file of many questions does not
    # hold resamples x clusters indices at once.
    block = max(1, _BLOCK_CELLS // sums.size)
    parts = []
    for start in range(0, resamples, block):
        pick = rng.integers(0, sums.size, size=(min(block, resamples - start), sums.size))
        parts.append(sums[pick].sum(axis=1) / counts[pick].sum(axis=1))
    means = np.concatenate(parts)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return PairedComparison(
        metric=metric,
        n=int(d.size),
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        diff=float(d.mean()),
        ci_low=float(low),
        ci_high=float(high),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        clusters=None if groups is None else int(sums.size),
        wins=int((d > 0).sum()),
        losses=int((d < 0).sum()),
        ties=int((d == 0).sum()),
        target=target,
        # a small tolerance: a resample mean equal to the target in exact arithmetic must count
        reach_target=None if target is None else float((means >= target - 1e-12).mean()),
    )


def read_per_question(path: str | Path, strategy: str | None = None) -> dict[str, dict[str, Any]]:
    """One strategy's rows of a ``--per-question`` file, by question id.

    ``strategy`` may be left out when the file holds exactly one strategy.
    """
    p = Path(path)
    if not p.is_file():
        raise EvaluationError(
            f"{p} is not a file",
            hint="write one with kgp lab eval ... --per-question FILE.jsonl",
        )  # checked here: the shared reader's own message speaks of bench QA files
    by_strategy: dict[str, dict[str, dict[str, Any]]] = {}
    for n, row in read_qa_rows(p, required=("id", "strategy"), hint=_ROW_HINT):
        key, name = str(row["id"]), str(row["strategy"])
        rows = by_strategy.setdefault(name, {})
        if key in rows:
            raise EvaluationError(
                f"{p}:{n}: question {key} appears twice for strategy {name}",
                hint="each file must come from one kgp lab eval run",
            )
        rows[key] = row
    if not by_strategy:
        raise EvaluationError(f"{p} holds no per-question rows")
    if strategy is None:
        if len(by_strategy) > 1:
            raise EvaluationError(
                f"{p} holds several strategies: {', '.join(sorted(by_strategy))}",
                hint="name the one to compare with --strategy (or --strategy-a / --strategy-b)",
            )
        return next(iter(by_strategy.values()))
    if strategy not in by_strategy:
        raise EvaluationError(
            f"{p} has no rows for strategy {strategy}",
            hint=f"it holds: {', '.join(sorted(by_strategy))}",
        )
    return by_strategy[strategy]


def _metric(rows: Iterable[dict[str, Any]], metric: str | None) -> str:
    """The metric asked for, or the first default every row carries."""
    rows = list(rows)
    candidates = (metric,) if metric else DEFAULT_METRICS
    for name in candidates:
        if all(isinstance(r.get(name), (int, float)) for r in rows):
            return name
    raise EvaluationError(
        f"not every row has a numeric {' or '.join(candidates)}",
        hint="pick a metric the per-question rows carry, e.g. --metric paragraph_recall",
    )


def compare_files(
    path_a: str | Path,
    path_b: str | Path,
    *,
    strategy_a: str | None = None,
    strategy_b: str | None = None,
    metric: str | None = None,
    resamples: int = 5000,
    confidence: float = 0.95,
    seed: int = 0,
    target: float | None = None,
    cluster: str | None = None,
) -> PairedComparison:
    """Pair the questions two per-question files share and compare one metric (``B - A``);
    with ``cluster`` (a row field such as ``doc_id``) resample clusters of questions."""
    rows_a = read_per_question(path_a, strategy_a)
    rows_b = read_per_question(path_b, strategy_b)
    shared = sorted(rows_a.keys() & rows_b.keys())
    if not shared:
        raise EvaluationError(
            f"{path_a} and {path_b} share no question ids",
            hint="compare two runs over the same questions (same dataset, --held-out, --limit)",
        )
    name = _metric([rows_a[q] for q in shared] + [rows_b[q] for q in shared], metric)
    groups = None
    if cluster:
        missing = [q for q in shared if rows_a[q].get(cluster) is None]
        if missing:
            raise EvaluationError(
                f"{len(missing)} rows of {path_a} have no {cluster!r} (e.g. question {missing[0]})",
                hint="cluster by a field every row carries: doc_id in document-QA files",
            )
        groups = [str(rows_a[q][cluster]) for q in shared]
    return paired_bootstrap(
        [rows_a[q][name] for q in shared],
        [rows_b[q][name] for q in shared],
        metric=name,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        target=target,
        groups=groups,
    )
