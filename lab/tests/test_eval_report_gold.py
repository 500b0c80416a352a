"""Evidence recall split by how many gold paragraphs a document-QA question needs."""

from __future__ import annotations

from types import SimpleNamespace

from kg_platform_lab.evaluation.report import gold_paragraphs, recall_by_gold_paragraphs


def _q(*sets: list[str]) -> SimpleNamespace:
    return SimpleNamespace(evidence_sets=list(sets))


def test_a_question_needs_the_fewest_paragraphs_any_annotator_used():
    assert gold_paragraphs(_q(["a", "b"], ["c"])) == 1
    assert gold_paragraphs(_q(["a", "b"], [], ["c", "d", "e"])) == 2
    assert gold_paragraphs(SimpleNamespace(gold=["fact"])) is None  # a QA-file question


def test_recall_is_reported_per_group_and_qa_questions_are_left_out():
    questions = [_q(["a"]), _q(["a"]), _q(["a", "b"]), _q(["a", "b", "c"]), _q(["a"] * 5)]
    recalls = [1.0, 0.0, 0.5, 1.0, 0.0]
    scores = [SimpleNamespace(evidence_recall=r) for r in recalls]
    by = recall_by_gold_paragraphs(questions, scores)
    assert by == {
        "1": {"n": 2, "evidence_recall": 0.5},
        "2": {"n": 1, "evidence_recall": 0.5},
        "3+": {"n": 2, "evidence_recall": 0.5},
    }
    qa = [SimpleNamespace(gold=["f"])]
    assert recall_by_gold_paragraphs(qa, [SimpleNamespace(evidence_recall=None)]) == {}
