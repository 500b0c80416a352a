"""SAGE self-feedback loop (spec §3.4): accept at fs, adjust min_k by the suggested direction,
re-cut, re-answer, at most 3 rounds, clamp, force one chunk when the cut does not change, and
return the best-scored answer on exhaustion."""

from __future__ import annotations

from kg_platform.reasoning.feedback import self_feedback_loop
from kg_platform.reasoning.pool import Ranked
from kg_platform.reasoning.steps import Draft, Feedback
from kg_platform.reasoning.types import Evidence

# The paper's worked example (spec §3.3): min_k = 7, g = 0.3 keeps 9.
PAPER = [13.79, 13.58, 11.91, 11.55, 10.94, 7.815, 7.665, 5.49, 4.416, 1.304, 1.2, 1.1]


def ranked(scores=PAPER) -> Ranked:
    items = [Evidence(chunk_id=f"c{i}", text=f"t{i}", score=s) for i, s in enumerate(scores)]
    return Ranked(items, list(scores), "test", min_k=7, gradient=0.3)


def run(feedbacks: list[Feedback], r: Ranked | None = None, min_k: int = 7, rounds: int = 3):
    r = r or ranked()
    answered: list[int] = []
    shown: list[int] = []

    def answer(ctx):
        answered.append(len(ctx))
        return Draft(f"answer with {len(ctx)}")

    def feedback(ctx, text):
        shown.append(len(ctx))
        return feedbacks.pop(0)

    out = self_feedback_loop(r.items, min_k, r.cut, answer, feedback, threshold=9, rounds=rounds)
    return out, answered, shown


def test_gradient_cut_reproduces_the_paper_example():
    assert len(ranked().cut(7)) == 9


def test_score_at_threshold_accepts_immediately():
    out, answered, shown = run([Feedback(9, -1)])
    assert out.accepted and out.stop == "accepted" and out.score == 9
    assert answered == [9] and shown == [9] and len(out.rounds) == 1


def test_grow_request_raises_min_k_and_reanswers():
    # min_k 7 -> 8 keeps the same 9 chunks (the cut went past it), so one more chunk is forced
    out, answered, _ = run([Feedback(5, 1), Feedback(9, 1)])
    assert answered == [9, 10]
    assert out.rounds[0].forced and out.accepted and len(out.context) == 10


def test_shrink_request_forces_one_chunk_fewer_when_the_cut_is_unchanged():
    out, answered, _ = run([Feedback(4, -1), Feedback(4, -1), Feedback(3, -1)])
    assert answered == [9, 8, 7]
    assert not out.accepted and out.stop == "max_rounds" and len(out.rounds) == 3
    # on exhaustion the best-scored answer wins (ties: the earlier one)
    assert out.draft.answer == "answer with 9" and out.score == 4


def test_at_most_three_feedback_rounds():
    out, answered, shown = run([Feedback(1, 1)] * 5)
    assert len(shown) == 3 and len(answered) == 3


def test_min_k_is_clamped_and_an_exhausted_direction_stops():
    r = ranked([5.0, 4.0])
    out, answered, _ = run([Feedback(2, 1), Feedback(2, 1)], r=r, min_k=7)
    assert answered == [2]  # min_k clamped to N = 2; growing cannot change it
    assert out.stop == "exhausted" and len(out.rounds) == 1


def test_best_answer_is_returned_when_a_later_round_scores_higher():
    out, _, _ = run([Feedback(3, 1), Feedback(7, -1), Feedback(5, 1)])
    assert out.score == 7 and out.draft.answer == "answer with 10"
    assert [r.score for r in out.rounds] == [3, 7, 5]
