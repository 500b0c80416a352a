"""Evidence recall and token coverage (document QA): the half-of-the-sentences rule, the best
annotator, coverage by tokens, and the folder layout check."""

from __future__ import annotations

import json

import pytest

from kg_platform_lab.evaluation.docqa import is_docqa_folder, load_docqa, score_evidence
from kg_platform_lab.evaluation.metrics import Ranked


def words(text: str) -> int:
    return len(text.split())


P1 = [
    ["Alpha one is here.", "Alpha two follows now.", "Alpha three ends it.", "Alpha four closes."]
]
P2 = [["Beta sentence only."]]


def test_a_paragraph_counts_when_half_of_its_sentences_are_returned() -> None:
    half = [Ranked("a", "x Alpha one is here. y Alpha three ends it.")]
    s = score_evidence(half, [P1], words)
    assert s.evidence_recall == 1.0 and s.paragraph_recall == 1.0
    assert s.sentence_recall == 0.5
    assert s.evidence_token_coverage == pytest.approx(8 / 15)
    quarter = [Ranked("a", "Alpha two follows now.")]
    s = score_evidence(quarter, [P1], words)
    assert s.evidence_recall == 0.0 and s.sentence_recall == 0.25
    assert s.evidence_token_coverage == pytest.approx(4 / 15)


def test_sentences_must_sit_inside_one_result_and_rank_of_first_hit() -> None:
    split = [
        Ranked("a", "noise"),
        Ranked("b", "Alpha one is"),
        Ranked("c", "here. Beta sentence only."),
    ]
    s = score_evidence(split, [P1 + P2], words)
    assert s.evidence_recall == 0.5  # P2 found; P1 has no sentence whole inside one result
    assert s.first_hit_rank == 3 and s.rr == pytest.approx(1 / 3)
    assert s.hits == [[], [], [4]]
    assert s.context_tokens == 1 + 3 + 4


def test_best_annotator_wins() -> None:
    ranking = [Ranked("a", "Beta sentence only.")]
    s = score_evidence(ranking, [P1, P2], words)
    assert s.evidence_recall == 1.0 and s.all_supporting_found == 1.0
    assert s.evidence_token_coverage == 1.0
    with pytest.raises(ValueError):
        score_evidence(ranking, [], words)


def test_folder_layout_and_loading(tmp_path) -> None:
    assert not is_docqa_folder(tmp_path)
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "1.2.md").write_text("# T\n\nAlpha one is here.\n")
    row = {
        "id": "q1",
        "question": "q?",
        "answer": "a",
        "doc_id": "1.2",
        "title": "T",
        "evidence_sets": [["Alpha one is here."], []],
    }
    (tmp_path / "questions.jsonl").write_text(json.dumps(row) + "\n")
    assert is_docqa_folder(tmp_path)
    (q,) = load_docqa(tmp_path)
    assert q.doc_id == "1.2" and q.evidence_sets == [["Alpha one is here."]]
    assert q.document == (tmp_path / "papers" / "1.2.md").resolve()
    assert q.gold[0].units == ("Alpha one is here.",)
