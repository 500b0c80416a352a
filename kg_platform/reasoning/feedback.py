"""SAGE's LLM self-feedback loop (SAGE paper), over any ranked context.

::

    selected = select(min_k); answer = LLM_answer(selected)
    repeat up to `rounds` times:
        (score, adj) = LLM_feedback(question, selected, answer)
        if score >= fs: return answer                         # accepted
        min_k = clamp(min_k + adj, 1, N); selected' = select(min_k)
        if selected' did not move in the requested direction: force one chunk more or fewer
        answer = LLM_answer(selected')
    return the highest-scored answer seen (ties: the earlier one)

``select`` is the SAGE gradient cut over the reranked list (reused, not re-queried) for the
retrieve-select-answer pipeline, or a plain prefix for an ordered decomposition context. When
forcing cannot change the selection either (the list is exhausted in that direction) the loop
stops: another round would ask the same question of the same context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kg_platform.reasoning.steps import Draft, Feedback
from kg_platform.reasoning.types import Evidence


@dataclass
class FeedbackRound:
    round: int
    min_k: int
    chunk_ids: list[str]
    answer: str
    score: int
    adjustment: int
    forced: bool = False

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class FeedbackOutcome:
    draft: Draft
    context: list[Evidence]
    score: int | None
    accepted: bool
    rounds: list[FeedbackRound] = field(default_factory=list)
    stop: str = ""  # 'accepted' | 'max_rounds' | 'exhausted'


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def self_feedback_loop(
    ranked: list[Evidence],
    min_k: int,
    select: Callable[[int], list[Evidence]],
    answer: Callable[[list[Evidence]], Draft],
    feedback: Callable[[list[Evidence], str], Feedback],
    *,
    threshold: int = 9,
    rounds: int = 3,
    first: tuple[list[Evidence], Draft] | None = None,
) -> FeedbackOutcome:
    """Run the loop; ``first`` passes an already answered initial selection (saves one call)."""
    n = len(ranked)
    min_k = clamp(min_k, 1, max(1, n))
    if first is not None:
        selected, draft = first
    else:
        selected = select(min_k)
        draft = answer(selected)
    best: tuple[int, Draft, list[Evidence]] | None = None
    history: list[FeedbackRound] = []
    stop = "max_rounds"
    for r in range(1, rounds + 1):
        fb = feedback(selected, draft.answer)
        adj = 1 if fb.adjustment >= 0 else -1
        history.append(
            FeedbackRound(r, min_k, [e.chunk_id for e in selected], draft.answer, fb.score, adj)
        )
        if best is None or fb.score > best[0]:
            best = (fb.score, draft, selected)
        if fb.score >= threshold:
            return FeedbackOutcome(draft, selected, fb.score, True, history, "accepted")
        if r == rounds:
            break
        new_min_k = clamp(min_k + adj, 1, max(1, n))
        new_sel = select(new_min_k)
        # The cut may keep the same set (or, after an earlier force, move the other way):
        # force one chunk in the requested direction.
        if (len(new_sel) - len(selected)) * adj <= 0:
            size = clamp(len(selected) + adj, 1, max(1, n))
            new_sel = ranked[:size]
            new_min_k = size
            history[-1].forced = True
            if [e.chunk_id for e in new_sel] == [e.chunk_id for e in selected]:
                stop = "exhausted"
                break
        min_k, selected = new_min_k, new_sel
        draft = answer(selected)
    assert best is not None
    return FeedbackOutcome(best[1], best[2], best[0], False, history, stop)
