"""``kgp lab eval-table``: several ``kgp lab eval --json`` reports laid out as one table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.table import merge_reports


def _block(**metrics: float) -> dict[str, Any]:
    block: dict[str, Any] = {
        "paragraph_recall": 0.0,
        "sentence_recall": 0.0,
        "all_supporting_found": 0.0,
        "mrr": 0.0,
        "context_tokens": 500.0,
        "latency_ms_p50": 1.0,
        "latency_ms_p95": 2.0,
        "n": 10,
    }
    block.update(metrics)
    return block


def _report(
    path: Path, strategies: dict[str, dict[str, Any]], *, budget=512, select=None, scope="document"
) -> Path:
    report = {
        "dataset": "/data/longdoc",
        "questions": 10,
        "k": 5,
        "budget_tokens": budget,
        "strategies": strategies,
        "select": select,
        "scope": scope,
        "corpus": "longdoc",
    }
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_columns_are_named_by_the_settings_that_differ_and_cells_come_from_each_report(tmp_path):
    a = _report(
        tmp_path / "a.json",
        {"bm25": _block(evidence_recall=0.40), "hybrid": _block(evidence_recall=0.50)},
    )
    b = _report(
        tmp_path / "b.json",
        {"hybrid": _block(evidence_recall=0.72), "mog": _block(evidence_recall=0.74)},
        budget=1024,
        select="late",
    )
    table = merge_reports([a, b])
    assert table.metric == "evidence_recall"
    assert table.columns == ["@512 none", "@1024 late"]  # scope and corpus are the same: left out
    assert table.strategies == ["bm25", "hybrid", "mog"]  # first seen first
    assert table.cells[("hybrid", "@1024 late")] == pytest.approx(0.72)
    lines = table.markdown().splitlines()
    assert lines[0] == "| strategy | @512 none | @1024 late |"
    assert lines[2] == "| `bm25` | 0.400 | - |"  # not in the second run
    assert lines[3] == "| `hybrid` | **0.500** | 0.720 |"
    assert lines[4] == "| `mog` | - | **0.740** |"
    assert "**" not in table.markdown(bold_best=False)


def test_reports_with_the_same_settings_are_told_apart_by_file_name(tmp_path):
    a = _report(tmp_path / "ldk.json", {"hybrid": _block(evidence_recall=0.6)})
    b = _report(tmp_path / "ldw.json", {"hybrid": _block(evidence_recall=0.7)})
    assert merge_reports([a, b]).columns == ["ldk", "ldw"]


def test_the_metric_falls_back_to_paragraph_recall_and_can_be_named(tmp_path):
    qa = _report(tmp_path / "qa.json", {"mogg": _block(paragraph_recall=0.85, mrr=0.5)})
    assert merge_reports([qa]).metric == "paragraph_recall"
    assert merge_reports([qa]).columns == ["qa"]
    assert merge_reports([qa], metric="mrr").cells[("mogg", "qa")] == pytest.approx(0.5)
    with pytest.raises(EvaluationError, match="no report has the metric 'nope'") as err:
        merge_reports([qa], metric="nope")
    assert "mrr" in (err.value.hint or "")


def test_strategies_pick_and_order_the_rows(tmp_path):
    a = _report(
        tmp_path / "a.json",
        {"bm25": _block(evidence_recall=0.4), "hybrid": _block(evidence_recall=0.5)},
    )
    assert merge_reports([a], strategies=["hybrid", "bm25"]).strategies == ["hybrid", "bm25"]
    with pytest.raises(EvaluationError, match="no report has the strategy 'mog'"):
        merge_reports([a], strategies=["mog"])


def test_files_that_are_not_eval_reports_are_refused_with_a_hint(tmp_path):
    per_question = tmp_path / "pq.jsonl"
    per_question.write_text('{"id": "q1", "strategy": "bm25"}\n{"id": "q2"}\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match="is not a JSON eval report") as err:
        merge_reports([per_question])
    assert "kgp lab compare" in (err.value.hint or "")
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(
        EvaluationError, match="is not a kgp lab eval report: missing top-level key"
    ):
        merge_reports([other])
    with pytest.raises(EvaluationError, match="no eval report at"):
        merge_reports([tmp_path / "absent.json"])
    with pytest.raises(EvaluationError, match="no report given"):
        merge_reports([])


def test_the_command_prints_the_table_and_writes_it(tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    a = _report(tmp_path / "a.json", {"hybrid": _block(evidence_recall=0.5)}, scope="document")
    b = _report(tmp_path / "b.json", {"hybrid": _block(evidence_recall=0.2)}, scope="corpus")
    out = tmp_path / "t.md"
    res = CliRunner().invoke(
        app, ["lab", "eval-table", str(a), str(b), "-s", "hybrid", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "evidence_recall:" in res.output
    assert "| `hybrid` | **0.500** | **0.200** |" in res.output
    assert out.read_text().splitlines()[0] == "| strategy | document | corpus |"


def test_multi_hop_reports_show_recall_at_5_passages_and_all_found(tmp_path):
    from typer.testing import CliRunner

    from kg_platform.cli.main import app

    qa = _report(
        tmp_path / "qa.json",
        {
            "default": _block(
                paragraph_recall=0.8, recall_at_5_passages=0.9, all_supporting_found=0.6
            ),
            "bm25": _block(paragraph_recall=0.7, recall_at_5_passages=0.75),
        },
    )
    res = CliRunner().invoke(app, ["lab", "eval-table", str(qa)])
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "paragraph_recall, recall_at_5_passages, all_supporting_found:" in res.output
    assert "| strategy | qa R | qa R@5 passages | qa all found |" in res.output
    assert "| `default` | **0.800** | **0.900** | **0.600** |" in res.output
    # one metric named: the one-metric table as before
    res = CliRunner().invoke(app, ["lab", "eval-table", str(qa), "--metric", "mrr"])
    assert "| strategy | qa |" in res.output
    # reports without the passage cut keep the single default metric
    old = _report(tmp_path / "old.json", {"bm25": _block(paragraph_recall=0.5)})
    res = CliRunner().invoke(app, ["lab", "eval-table", str(old)])
    assert res.output.startswith("paragraph_recall:\n")
