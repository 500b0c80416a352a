"""One table from several ``kgp lab eval --json`` reports: strategies down, runs across.

An acceptance table such as issue 12's (every strategy, two budgets, two scopes, with and
without a selection) is a dozen ``kgp lab eval`` runs, because a run has one budget, one scope and
one selection. This module reads their reports and lays one metric out as a single table, so
the table in the docs is generated from the JSON that is committed beside it, not copied by hand.

A column is named by what differs between the reports (scope, selection, budget or k, corpus,
dataset), e.g. ``@1024 late`` or ``corpus @512 none``; when that does not tell two reports
apart, by the file name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_platform.errors import EvaluationError
from kg_platform_lab.evaluation.compare import DEFAULT_METRICS
from kg_platform_lab.evaluation.report import validate_report

_REPORT_HINT = (
    "pass files written by kgp lab eval --json (--per-question files are for kgp lab compare)"
)


@dataclass(frozen=True)
class LoadedReport:
    path: Path
    report: dict[str, Any]

    def setting(self, key: str) -> str:
        """One run setting as a column label shows it ("" when the report lacks it)."""
        r = self.report
        if key == "cut":
            return f"@{r['budget_tokens']}" if r.get("budget_tokens") else f"k={r['k']}"
        if key == "select":
            return str(r.get("select") or "none")
        if key == "dataset":
            return Path(str(r.get("dataset", ""))).name
        value = r.get(key)
        return "" if value is None else str(value)


#: the settings a label may use, in the order a label lists them
LABEL_SETTINGS = ("dataset", "corpus", "scope", "cut", "select")


@dataclass(frozen=True)
class MergedTable:
    metric: str
    columns: list[str]
    strategies: list[str]
    cells: dict[tuple[str, str], float]  # (strategy, column) -> value; absent = not run

    def best(self, column: str) -> float | None:
        values = [v for (_, c), v in self.cells.items() if c == column]
        return max(values) if values else None

    def markdown(self, *, bold_best: bool = True, digits: int = 3) -> str:
        """A Markdown table; the best value of each column in bold ("-": not in that run)."""
        lines = [
            "| strategy | " + " | ".join(self.columns) + " |",
            "|---" * (len(self.columns) + 1) + "|",
        ]
        best = {col: self.best(col) for col in self.columns} if bold_best else {}
        for name in self.strategies:
            cells = []
            for col in self.columns:
                value = self.cells.get((name, col))
                if value is None:
                    cells.append("-")
                    continue
                text = f"{value:.{digits}f}"
                cells.append(f"**{text}**" if value == best.get(col) else text)
            lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def load_report(path: Path) -> LoadedReport:
    """A ``kgp lab eval --json`` report, or an error that says what the file is instead."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EvaluationError(
            f"no eval report at {path}", hint="pass files written by kgp lab eval --json"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvaluationError(
            f"{path} is not a JSON eval report: {exc}", hint=_REPORT_HINT
        ) from exc
    problems = validate_report(report) if isinstance(report, dict) else ["not a JSON object"]
    if problems:
        raise EvaluationError(
            f"{path} is not a kgp lab eval report: {'; '.join(problems[:3])}", hint=_REPORT_HINT
        )
    return LoadedReport(Path(path), report)


def column_labels(reports: Sequence[LoadedReport]) -> list[str]:
    """Each report's label: the settings that differ between the reports, else its file name."""
    if len(reports) == 1:
        return [reports[0].path.stem]
    differing = [key for key in LABEL_SETTINGS if len({r.setting(key) for r in reports}) > 1]
    labels = [" ".join(r.setting(key) for key in differing if r.setting(key)) for r in reports]
    if len(set(labels)) < len(labels) or not all(labels):
        labels = [r.path.stem for r in reports]
        if len(set(labels)) < len(labels):
            labels = [str(r.path) for r in reports]
    return labels


def pick_metric(reports: Sequence[LoadedReport], metric: str | None) -> str:
    """``metric``, or the first default every strategy block of every report has."""
    blocks = [b for r in reports for b in r.report["strategies"].values()]
    if metric:
        if not any(metric in b for b in blocks):
            known = sorted({k for b in blocks for k, v in b.items() if isinstance(v, (int, float))})
            raise EvaluationError(
                f"no report has the metric {metric!r}", hint=f"known: {', '.join(known)}"
            )
        return metric
    for name in DEFAULT_METRICS:
        if blocks and all(name in b for b in blocks):
            return name
    raise EvaluationError(
        f"the reports share no default metric ({', '.join(DEFAULT_METRICS)})",
        hint="name one with --metric",
    )


def merge_reports(
    paths: Sequence[Path], *, metric: str | None = None, strategies: Sequence[str] | None = None
) -> MergedTable:
    """The table of ``metric`` over ``paths``: one column per report, in the order given."""
    if not paths:
        raise EvaluationError("no report given", hint="pass one or more kgp lab eval --json files")
    reports = [load_report(p) for p in paths]
    chosen = pick_metric(reports, metric)
    columns = column_labels(reports)
    seen: list[str] = []
    for r in reports:
        seen += [name for name in r.report["strategies"] if name not in seen]
    if strategies:
        missing = [s for s in strategies if s not in seen]
        if missing:
            raise EvaluationError(
                f"no report has the strategy {', '.join(repr(s) for s in missing)}",
                hint=f"the reports have: {', '.join(seen)}",
            )
        seen = list(strategies)
    cells: dict[tuple[str, str], float] = {}
    for r, col in zip(reports, columns):
        for name, block in r.report["strategies"].items():
            value = block.get(chosen)
            if name in seen and isinstance(value, (int, float)) and not isinstance(value, bool):
                cells[(name, col)] = float(value)
    return MergedTable(metric=chosen, columns=columns, strategies=seen, cells=cells)


#: short names of the metrics a multi-metric table puts beside each run's label
SHORT_NAMES = {
    "paragraph_recall": "R",
    "evidence_recall": "R",
    "recall_at_5_passages": "R@5 passages",
    "all_supporting_found": "all found",
    "all_found_at_5_passages": "all found@5 passages",
}

#: what a multi-hop table shows by default when the reports carry the passage cut: recall at the
#: run's own cut (token budget or k), recall at 5 passages (the published figures' cut), and the
#: share of questions with every supporting fact returned
MULTI_HOP_METRICS = ("recall_at_5_passages", "all_supporting_found")


def default_metrics(paths: Sequence[Path]) -> list[str]:
    """The run's own metric, plus recall at 5 passages and all-supporting-found when every
    strategy of every report has them (QA-file reports written since they were added)."""
    reports = [load_report(p) for p in paths]
    first = pick_metric(reports, None)
    blocks = [b for r in reports for b in r.report["strategies"].values()]
    extra = [m for m in MULTI_HOP_METRICS if blocks and all(m in b for b in blocks)]
    return [first, *extra] if len(extra) == len(MULTI_HOP_METRICS) else [first]


def merge_metrics(
    paths: Sequence[Path], metrics: Sequence[str], *, strategies: Sequence[str] | None = None
) -> MergedTable:
    """One table of several metrics: each run's column repeated per metric (``<run> <short>``)."""
    if len(metrics) == 1:
        return merge_reports(paths, metric=metrics[0], strategies=strategies)
    tables = [merge_reports(paths, metric=m, strategies=strategies) for m in metrics]
    columns: list[str] = []
    cells: dict[tuple[str, str], float] = {}
    for col in tables[0].columns:
        for table in tables:
            label = f"{col} {SHORT_NAMES.get(table.metric, table.metric)}"
            columns.append(label)
            for name in table.strategies:
                value = table.cells.get((name, col))
                if value is not None:
                    cells[(name, label)] = value
    return MergedTable(
        metric=", ".join(t.metric for t in tables),
        columns=columns,
        strategies=tables[0].strategies,
        cells=cells,
    )
