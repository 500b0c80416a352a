"""Supporting-fact metrics on ranked results: pure functions, no database, no model.

Definitions (the contract other tools rely on; change only additively):

* **normalised text**: Unicode NFC, runs of whitespace collapsed to one space, stripped.
* a result **covers** a gold fact when the normalised text of any of the fact's ``units`` is a
  substring of the result's normalised text (sentence-level data: the unit is the gold sentence;
  paragraph-level data such as MuSiQue: the units are the sentences of the gold paragraph, see
  :mod:`kg_platform_lab.evaluation.datasets`).
* the **ranking** is the strategy's list in the order it returned it. Ties in score are *not*
  re-sorted: position decides. Duplicate results (same id, or same normalised text) are collapsed
  to their first occurrence before cutting, so a duplicate neither wastes a slot nor counts twice.
* **cut**: the first ``k`` results, or with a token budget the longest prefix that fits; the
  result that crosses the budget is truncated to the tokens left (what a context packer does).
* per question: ``sentence_recall`` = covered facts / facts; ``paragraph_recall`` = gold paragraphs
  with at least one covered fact / gold paragraphs; ``all_supporting_found`` = 1 if every fact is
  covered; ``rr`` = 1 / rank of the first result covering any fact (0 if none);
  ``context_tokens`` = cl100k tokens of the cut results' texts, summed.
* questions with empty gold are not scored (the harness counts them as skipped).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFC, whitespace collapsed, stripped: the form every containment test uses."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text or "")).strip()


@dataclass(frozen=True)
class GoldFact:
    """One gold supporting fact: covered when any of ``units`` is inside a result's text."""

    paragraph: str  # key of the gold paragraph (idx:title)
    units: tuple[str, ...]  # normalised texts; any one contained = covered
    title: str = ""
    sentence: int = 0

    def covered_by(self, normalised_text: str) -> bool:
        return any(unit and unit in normalised_text for unit in self.units)


@dataclass(frozen=True)
class Ranked:
    """One result as the metrics see it."""

    id: str
    text: str


@dataclass
class QuestionScore:
    """Scores of one question for one strategy, plus what is needed for error analysis."""

    sentence_recall: float
    paragraph_recall: float
    all_supporting_found: float
    rr: float
    context_tokens: int
    ids: list[str] = field(default_factory=list)  # ranked ids after dedup and cut
    hits: list[list[int]] = field(default_factory=list)  # per result: indexes of facts covered
    first_hit_rank: int | None = None
    evidence_recall: float | None = None  # document QA only (evaluation.docqa)
    evidence_token_coverage: float | None = None  # document QA only

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def dedupe(results: Sequence[Ranked]) -> list[Ranked]:
    """First occurrence of each id and of each normalised text, order kept."""
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    out: list[Ranked] = []
    for r in results:
        norm = normalise(r.text)
        if r.id in seen_ids or norm in seen_texts:
            continue
        seen_ids.add(r.id)
        seen_texts.add(norm)
        out.append(r)
    return out


def cut_at_k(results: Sequence[Ranked], k: int) -> list[Ranked]:
    if k < 1:
        raise ValueError("k must be >= 1")
    return list(results[:k])


def cut_at_budget(
    results: Sequence[Ranked],
    budget: int,
    count: Callable[[str], int],
    truncate: Callable[[str, int], str],
) -> list[Ranked]:
    """The longest prefix within ``budget`` tokens; the crossing result is truncated to fit."""
    if budget < 1:
        raise ValueError("budget must be >= 1 token")
    out: list[Ranked] = []
    left = budget
    for r in results:
        n = count(r.text)
        if n <= left:
            out.append(r)
            left -= n
        else:
            if left > 0:
                out.append(Ranked(r.id, truncate(r.text, left)))
            break
        if left == 0:
            break
    return out


def score_question(
    ranking: Sequence[Ranked], gold: Sequence[GoldFact], count: Callable[[str], int]
) -> QuestionScore:
    """Score an already deduplicated and cut ranking against non-empty ``gold``."""
    if not gold:
        raise ValueError("score_question needs at least one gold fact (skip empty gold)")
    covered: set[int] = set()
    hits: list[list[int]] = []
    first: int | None = None
    tokens = 0
    for rank, r in enumerate(ranking, 1):
        norm = normalise(r.text)
        tokens += count(r.text)
        mine = [i for i, fact in enumerate(gold) if fact.covered_by(norm)]
        hits.append(mine)
        if mine and first is None:
            first = rank
        covered.update(mine)
    paragraphs = {f.paragraph for f in gold}
    found_paragraphs = {gold[i].paragraph for i in covered}
    sentence_recall = len(covered) / len(gold)
    return QuestionScore(
        sentence_recall=sentence_recall,
        paragraph_recall=len(found_paragraphs) / len(paragraphs),
        all_supporting_found=1.0 if len(covered) == len(gold) else 0.0,
        rr=1.0 / first if first else 0.0,
        context_tokens=tokens,
        ids=[r.id for r in ranking],
        hits=hits,
        first_hit_rank=first,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), 0.0 for no values."""
    if not values:
        return 0.0
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def aggregate(scores: Sequence[QuestionScore], latencies_ms: Sequence[float]) -> dict[str, Any]:
    """The per-strategy block of the JSON report."""
    n = len(scores)

    def mean(values: list[float]) -> float:
        return float(sum(values) / n) if n else 0.0

    extra: dict[str, Any] = {}
    if scores and all(s.evidence_recall is not None for s in scores):
        extra = {
            "evidence_recall": mean([float(s.evidence_recall or 0.0) for s in scores]),
            "evidence_token_coverage": mean(
                [float(s.evidence_token_coverage or 0.0) for s in scores]
            ),
        }
    return extra | {
        "paragraph_recall": mean([s.paragraph_recall for s in scores]),
        "sentence_recall": mean([s.sentence_recall for s in scores]),
        "all_supporting_found": mean([s.all_supporting_found for s in scores]),
        "mrr": mean([s.rr for s in scores]),
        "context_tokens": mean([float(s.context_tokens) for s in scores]),
        "latency_ms_p50": percentile(latencies_ms, 50),
        "latency_ms_p95": percentile(latencies_ms, 95),
        "n": n,
    }
