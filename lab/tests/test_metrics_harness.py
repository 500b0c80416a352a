"""The harness's pure parts: options, fetch size, cuts, curves and the selection hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.harness import EvalConfig, StrategyRun, cut, curve
from kg_platform_lab.evaluation.metrics import GoldFact, Ranked
from kg_platform_lab.evaluation.datasets import QAExample


def test_config_defaults_and_fetch_size() -> None:
    cfg = EvalConfig(dataset=Path("x/hotpotqa.jsonl"), strategies=["bm25"])
    assert cfg.corpus == "qa-hotpotqa" and cfg.k == 5 and cfg.fetch_size() == 5
    assert (
        EvalConfig(dataset=Path("a.jsonl"), strategies=["bm25"], budget_tokens=512).fetch_size()
        == 32
    )
    assert (
        EvalConfig(dataset=Path("a.jsonl"), strategies=["bm25"], budget_tokens=10**6).fetch_size()
        == 100
    )
    assert EvalConfig(dataset=Path("a.jsonl"), strategies=["bm25"], fetch_k=7).fetch_size() == 7


@pytest.mark.parametrize(
    "kwargs",
    [
        {"strategies": []},
        {"strategies": ["bm25"], "k": 0},
        {"strategies": ["bm25"], "budget_tokens": 0},
    ],
)
def test_config_rejects_bad_options_with_a_clear_error(kwargs) -> None:
    with pytest.raises(EvaluationError):
        EvalConfig(dataset=Path("a.jsonl"), **kwargs)


def test_cut_uses_budget_then_k_and_leaves_selection_alone() -> None:
    ranking = [Ranked(str(i), "word " * 10) for i in range(8)]
    assert len(cut(ranking, EvalConfig(dataset=Path("a.jsonl"), strategies=["s"], k=3))) == 3
    kept = cut(ranking, EvalConfig(dataset=Path("a.jsonl"), strategies=["s"], budget_tokens=25))
    assert [r.id for r in kept] == ["0", "1", "2"]  # 10 + 10 + 5 tokens (the third truncated)
    sel = EvalConfig(dataset=Path("a.jsonl"), strategies=["s"], k=3, select="sage")
    assert len(cut(ranking, sel)) == 8  # the selection already decided


def test_curve_is_monotone_in_k() -> None:
    fact = GoldFact(paragraph="0:A", units=("needle sentence here",))
    ex = QAExample(id="q", question="?", answer="", dataset="t", gold=[fact])
    run = StrategyRun("s", rankings=[[Ranked("a", "hay"), Ranked("b", "a needle sentence here")]])
    points = curve(run, [ex], EvalConfig(dataset=Path("a.jsonl"), strategies=["s"], k=3))
    assert [p["cut"] for p in points] == [1, 2, 3]
    assert [p["sentence_recall"] for p in points] == [0.0, 1.0, 1.0]
    assert points[0]["context_tokens"] < points[1]["context_tokens"] == points[2]["context_tokens"]
