"""Metrics on hand-made rankings with answers worked out by hand (kg_platform_lab.evaluation.metrics)."""

from __future__ import annotations

import pytest

from kg_platform_lab.evaluation.datasets import resolve_gold, split_sentences
from kg_platform_lab.evaluation.metrics import (
    GoldFact,
    Ranked,
    aggregate,
    cut_at_budget,
    cut_at_k,
    dedupe,
    normalise,
    percentile,
    score_question,
)
from kg_platform_lab.evaluation.report import validate_report


def words(text: str) -> int:
    """A transparent token counter for tests: one token per whitespace-separated word."""
    return len(text.split())


def first_words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


A1 = GoldFact(paragraph="0:A", units=("Alpha is a city in Spain.",), title="A", sentence=0)
A2 = GoldFact(paragraph="0:A", units=("It has two rivers.",), title="A", sentence=1)
B1 = GoldFact(paragraph="1:B", units=("Beta was born in Alpha.",), title="B", sentence=0)
GOLD = [A1, A2, B1]


def test_normalise_collapses_whitespace_and_strips() -> None:
    assert normalise("  Alpha\n is \t a city.  ") == "Alpha is a city."


def test_containment_ignores_whitespace_differences() -> None:
    assert A1.covered_by(normalise("Intro.  Alpha is a\ncity in Spain. More."))
    assert not A1.covered_by(normalise("Alpha is a town in Spain."))


def test_perfect_ranking() -> None:
    ranking = [
        Ranked("c1", "Alpha is a city in Spain. It has two rivers."),
        Ranked("c2", "Beta was born in Alpha."),
    ]
    s = score_question(ranking, GOLD, words)
    assert (s.sentence_recall, s.paragraph_recall, s.all_supporting_found, s.rr) == (1, 1, 1, 1)
    assert s.hits == [[0, 1], [2]]
    assert s.context_tokens == 10 + 5


def test_partial_ranking_sentence_vs_paragraph_recall_and_mrr() -> None:
    ranking = [
        Ranked("x", "Nothing relevant here."),
        Ranked("y", "Noise."),
        Ranked("z", "Alpha is a city in Spain."),
    ]
    s = score_question(ranking, GOLD, words)
    assert s.sentence_recall == pytest.approx(1 / 3)  # A1 of A1, A2, B1
    assert s.paragraph_recall == pytest.approx(1 / 2)  # paragraph A of A, B
    assert s.all_supporting_found == 0.0
    assert s.rr == pytest.approx(1 / 3)
    assert s.first_hit_rank == 3


def test_no_hit_scores_zero() -> None:
    s = score_question([Ranked("x", "unrelated")], GOLD, words)
    assert (s.sentence_recall, s.paragraph_recall, s.all_supporting_found, s.rr) == (0, 0, 0, 0)
    assert s.first_hit_rank is None


def test_empty_ranking_scores_zero_with_zero_tokens() -> None:
    s = score_question([], GOLD, words)
    assert s.sentence_recall == 0 and s.context_tokens == 0 and s.rr == 0


def test_empty_gold_is_refused_so_the_harness_must_skip_it() -> None:
    with pytest.raises(ValueError):
        score_question([Ranked("c", "text")], [], words)


def test_ties_keep_the_strategy_order() -> None:
    # Both items would carry the same score; the metric must use list position, never re-sort.
    ranking = [Ranked("noise", "Unrelated text."), Ranked("hit", "Beta was born in Alpha.")]
    assert score_question(ranking, GOLD, words).rr == pytest.approx(1 / 2)
    assert score_question(list(reversed(ranking)), GOLD, words).rr == 1.0


def test_duplicates_are_collapsed_before_the_cut() -> None:
    ranking = [
        Ranked("c1", "Alpha is a city in Spain."),
        Ranked("c1", "Alpha is a city in Spain."),
        Ranked("c9", " Alpha is a  city in Spain. "),  # same text, other id
        Ranked("c2", "Beta was born in Alpha."),
    ]
    unique = dedupe(ranking)
    assert [r.id for r in unique] == ["c1", "c2"]
    s = score_question(cut_at_k(unique, 2), GOLD, words)
    assert s.sentence_recall == pytest.approx(2 / 3)
    assert s.paragraph_recall == 1.0
    # Without dedup the duplicates would have filled both slots.
    assert score_question(cut_at_k(ranking, 2), GOLD, words).paragraph_recall == 0.5


def test_a_fact_covered_twice_counts_once() -> None:
    ranking = [Ranked("c1", "Beta was born in Alpha."), Ranked("c2", "So: Beta was born in Alpha.")]
    s = score_question(ranking, GOLD, words)
    assert s.sentence_recall == pytest.approx(1 / 3)
    assert s.hits == [[2], [2]]


def test_cut_at_k_and_invalid_k() -> None:
    ranking = [Ranked(str(i), f"t{i}") for i in range(10)]
    assert [r.id for r in cut_at_k(ranking, 3)] == ["0", "1", "2"]
    assert len(cut_at_k(ranking[:2], 5)) == 2
    with pytest.raises(ValueError):
        cut_at_k(ranking, 0)


def test_budget_cut_truncates_the_crossing_result() -> None:
    ranking = [
        Ranked("a", "one two three"),
        Ranked("b", "four five six seven"),
        Ranked("c", "eight"),
    ]
    kept = cut_at_budget(ranking, 5, words, first_words)
    assert [(r.id, r.text) for r in kept] == [("a", "one two three"), ("b", "four five")]
    assert sum(words(r.text) for r in kept) == 5
    # Exactly filling the budget stops there, without an empty tail item.
    assert [r.id for r in cut_at_budget(ranking, 3, words, first_words)] == ["a"]
    # A first result bigger than the whole budget is truncated, not dropped.
    assert cut_at_budget(ranking[1:], 2, words, first_words)[0].text == "four five"


def test_budget_truncation_can_lose_a_fact() -> None:
    ranking = [Ranked("a", "Padding padding padding. Beta was born in Alpha.")]
    full = score_question(ranking, GOLD, words)
    cut = score_question(cut_at_budget(ranking, 4, words, first_words), GOLD, words)
    assert full.sentence_recall > 0 and cut.sentence_recall == 0


def test_percentile_matches_linear_interpolation() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def test_aggregate_means_and_latency() -> None:
    s1 = score_question([Ranked("a", "Alpha is a city in Spain. It has two rivers.")], GOLD, words)
    s2 = score_question([Ranked("b", "x"), Ranked("c", "Beta was born in Alpha.")], GOLD, words)
    agg = aggregate([s1, s2], [5.0, 15.0])
    assert agg["sentence_recall"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert agg["paragraph_recall"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert agg["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert agg["all_supporting_found"] == 0.0
    assert agg["latency_ms_p50"] == 10.0
    assert agg["n"] == 2 and isinstance(agg["n"], int)
    assert aggregate([], [])["n"] == 0


# ----------------------------------------------------------------- gold resolution from rows
def _row(dataset: str, paragraphs: list[tuple[str, list[str], bool]], facts: list[list]) -> dict:
    return {
        "id": "q",
        "dataset": dataset,
        "question": "?",
        "supporting_facts": facts,
        "paragraphs": [
            {"idx": i, "title": t, "sentences": s, "is_supporting": g}
            for i, (t, s, g) in enumerate(paragraphs)
        ],
    }


def test_sentence_level_gold_keeps_the_whole_sentence() -> None:
    row = _row(
        "hotpotqa",
        [("A", ["Alpha is in Spain.", " It has Dr. Who fans."], True), ("B", ["Beta."], False)],
        [["A", 1]],
    )
    [fact] = resolve_gold(row)
    assert fact.units == ("It has Dr. Who fans.",)
    assert fact.paragraph == "0:A"


def test_musique_repeated_titles_resolve_to_distinct_supporting_paragraphs() -> None:
    text_1 = "Kim is a singer from Seoul. She released three albums in the nineties."
    text_2 = "Kim is also a river in Korea. It flows into the Yellow Sea near Incheon."
    row = _row(
        "musique",
        [
            ("Kim", ["Kim is an unrelated distractor paragraph."], False),
            ("Kim", [text_1], True),
            ("Other", ["Noise paragraph text."], False),
            ("Kim", [text_2], True),
        ],
        [["Kim", 0], ["Kim", 0]],
    )
    facts = resolve_gold(row)
    assert [f.paragraph for f in facts] == ["1:Kim", "3:Kim"]
    # Paragraph-level gold: any one sentence of the gold paragraph covers it.
    assert facts[0].units == (
        "Kim is a singer from Seoul.",
        "She released three albums in the nineties.",
    )
    s = score_question([Ranked("p", "It flows into the Yellow Sea near Incheon.")], facts, words)
    assert s.sentence_recall == 0.5 and s.paragraph_recall == 0.5


def test_paragraph_units_merge_short_fragments() -> None:
    units = split_sentences("Yes. The bridge opened in 1932 after four years of work. It is long.")
    # "Yes." joins its successor; the short tail "It is long." joins its predecessor.
    assert units == ["Yes. The bridge opened in 1932 after four years of work. It is long."]
    assert split_sentences("The first sentence is long enough. The second one is long too.") == [
        "The first sentence is long enough.",
        "The second one is long too.",
    ]


def test_unresolvable_fact_is_an_error_with_a_hint() -> None:
    from kg_platform.errors import EvaluationError

    row = _row("hotpotqa", [("A", ["One."], True)], [["Missing", 0]])
    with pytest.raises(EvaluationError) as info:
        resolve_gold(row)
    assert info.value.hint


def test_empty_supporting_facts_give_empty_gold() -> None:
    assert resolve_gold(_row("medqa_us", [], [])) == []


def test_validate_report_checks_the_stable_keys() -> None:
    good = {
        "dataset": "x",
        "questions": 2,
        "k": 5,
        "budget_tokens": None,
        "strategies": {"bm25": aggregate([], [])},
    }
    assert validate_report(good) == []
    bad = {"dataset": "x", "questions": 2, "k": 5, "strategies": {"bm25": {"mrr": 1}}}
    problems = validate_report(bad)
    assert "missing top-level key 'budget_tokens'" in problems
    assert any("'mrr' has type int" in p for p in problems)
    assert any("missing 'n'" in p for p in problems)
