"""``kgp lab eval-table``: one Markdown table from several ``kgp lab eval --json`` reports (see
:mod:`kg_platform_lab.evaluation.table`)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("eval-table")(eval_table_command)


def eval_table_command(
    reports: list[Path] = typer.Argument(..., help="kgp lab eval --json reports, one column each"),
    metric: str = typer.Option(
        None,
        "--metric",
        help="the strategy field to show (default: evidence_recall, else paragraph_recall)",
    ),
    strategies: str = typer.Option(
        None, "--strategy", "-s", help="comma-separated strategies, in this row order"
    ),
    out: Path = typer.Option(None, "--out", "-o", help="also write the table to this file"),
    bold_best: bool = typer.Option(
        True, "--bold-best/--no-bold-best", help="bold each column's best value"
    ),
) -> None:
    """Lay one metric of several kgp lab eval reports out as one Markdown table: strategies down,
    runs across, each column named by the settings that differ between the runs."""
    from kg_platform_lab.evaluation.table import merge_reports

    names = [s.strip() for s in strategies.split(",") if s.strip()] if strategies else None
    table = merge_reports(reports, metric=metric, strategies=names)
    text = table.markdown(bold_best=bold_best)
    typer.echo(f"{table.metric}:\n{text}")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
