"""``kgp lab compare``: paired bootstrap of two per-question files (no database needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.compare import compare_files, paired_bootstrap


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(strategy: str, scores: dict[str, float], metric: str = "evidence_recall") -> list[dict]:
    return [{"id": q, "strategy": strategy, metric: s, "ids": []} for q, s in scores.items()]


def test_a_constant_shift_has_a_point_interval_and_every_question_won():
    a = np.linspace(0.0, 0.9, 50)
    c = paired_bootstrap(a, a + 0.1, target=0.1)
    assert c.n == 50 and c.diff == pytest.approx(0.1)
    assert c.ci_low == pytest.approx(0.1) and c.ci_high == pytest.approx(0.1)
    assert (c.wins, c.losses, c.ties) == (50, 0, 0)
    assert c.reach_target == 1.0
    assert paired_bootstrap(a, a + 0.1, target=0.11).reach_target == 0.0


def test_pairing_sees_a_small_steady_gain_under_large_question_to_question_spread():
    rng = np.random.default_rng(1)
    hardness = rng.uniform(0, 1, 200)  # questions differ far more than the two systems do
    a = hardness
    b = hardness + 0.03 + rng.normal(0, 0.01, 200)
    c = paired_bootstrap(a, b)
    assert 0.025 < c.ci_low and c.ci_high < 0.035  # paired: the spread of the questions cancels
    # the same means, unpaired (b's questions shuffled), cannot tell the systems apart
    shuffled = paired_bootstrap(a, rng.permutation(b))
    assert shuffled.ci_low < 0 < shuffled.ci_high


def test_no_difference_gives_an_interval_around_zero_and_the_seed_fixes_it():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, 300).astype(float)
    b = rng.permutation(a)
    c = paired_bootstrap(a, b, seed=7)
    assert c.ci_low < c.diff < c.ci_high and c.ci_low < 0 < c.ci_high
    assert paired_bootstrap(a, b, seed=7) == c


def test_clusters_widen_the_interval_when_one_papers_questions_move_together():
    rng = np.random.default_rng(3)
    paper_effect = rng.normal(0, 0.1, 10)  # B is better on some papers, worse on others
    groups = [f"p{k}" for k in range(10) for _ in range(20)]
    a = rng.uniform(0, 1, 200)
    b = a + np.repeat(paper_effect, 20) + rng.normal(0, 0.01, 200)
    by_question = paired_bootstrap(a, b)
    by_paper = paired_bootstrap(a, b, groups=groups)
    assert by_question.clusters is None and by_paper.clusters == 10
    assert by_paper.diff == pytest.approx(by_question.diff)
    width = lambda c: c.ci_high - c.ci_low  # noqa: E731
    # 200 questions but only 10 independent papers: the honest interval is several times wider
    assert width(by_paper) > 3 * width(by_question)
    assert by_paper.ci_low < by_paper.diff < by_paper.ci_high


def test_compare_files_pairs_shared_questions_only(tmp_path):
    a = _write(tmp_path / "a.jsonl", _rows("hybrid", {"q1": 0.0, "q2": 0.5, "q3": 1.0}))
    b = _write(tmp_path / "b.jsonl", _rows("mog", {"q2": 1.0, "q3": 1.0, "q4": 0.0}))
    c = compare_files(a, b, resamples=200)
    assert c.metric == "evidence_recall" and c.n == 2
    assert (c.mean_a, c.mean_b, c.wins, c.ties) == (0.75, 1.0, 1, 1)


def test_qa_files_fall_back_to_paragraph_recall(tmp_path):
    rows = _rows("bm25", {"q1": 0.5, "q2": 1.0}, metric="paragraph_recall")
    rows += _rows("vector", {"q1": 1.0, "q2": 1.0}, metric="paragraph_recall")
    f = _write(tmp_path / "qa.jsonl", rows)
    c = compare_files(f, f, strategy_a="bm25", strategy_b="vector", resamples=100)
    assert c.metric == "paragraph_recall" and c.diff == pytest.approx(0.25)


def test_unclear_input_is_refused_with_a_hint(tmp_path):
    two = _write(tmp_path / "two.jsonl", _rows("bm25", {"q1": 1.0}) + _rows("vector", {"q1": 0.0}))
    with pytest.raises(EvaluationError, match="several strategies") as e:
        compare_files(two, two)
    assert "--strategy" in (e.value.hint or "")
    with pytest.raises(EvaluationError, match="no rows for strategy mog"):
        compare_files(two, two, strategy_a="mog", strategy_b="bm25")
    other = _write(tmp_path / "other.jsonl", _rows("bm25", {"q9": 1.0}))
    with pytest.raises(EvaluationError, match="share no question ids"):
        compare_files(two, other, strategy_a="bm25")
    twice = _write(tmp_path / "twice.jsonl", _rows("bm25", {"q1": 1.0}) * 2)
    with pytest.raises(EvaluationError, match="appears twice"):
        compare_files(twice, twice)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1"}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match="bad.jsonl:1 has no 'strategy'") as e:
        compare_files(bad, bad)
    assert "kgp lab eval --per-question" in (e.value.hint or "")
    with pytest.raises(EvaluationError, match="have no 'doc_id'"):
        compare_files(two, two, strategy_a="bm25", strategy_b="vector", cluster="doc_id")
    with pytest.raises(EvaluationError, match="numeric nope"):
        compare_files(two, two, strategy_a="bm25", strategy_b="vector", metric="nope")


def test_the_command_prints_the_interval_and_writes_json(tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    a = _write(tmp_path / "a.jsonl", _rows("hybrid", {f"q{i}": 0.5 for i in range(20)}))
    b = _write(tmp_path / "b.jsonl", _rows("hybrid", {f"q{i}": 0.6 for i in range(20)}))
    out = tmp_path / "c.json"
    res = CliRunner().invoke(
        app,
        ["lab", "compare", str(a), str(b), "-s", "hybrid", "--target", "0.05", "--json", str(out)],
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "20 questions in both" in res.output and "B - A +0.100" in res.output
    assert "95% interval [+0.100, +0.100]" in res.output and ">= +0.050: 100.0%" in res.output
    saved = json.loads(out.read_text())
    assert saved["n"] == 20 and saved["wins"] == 20 and saved["reach_target"] == 1.0
