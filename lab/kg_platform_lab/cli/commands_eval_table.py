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
        help="the strategy field(s) to show, comma-separated (default: evidence_recall, else "
        "paragraph_recall; for multi-hop reports also recall_at_5_passages and "
        "all_supporting_found)",
    ),
    strategies: str = typer.Option(
        None, "--strategy", "-s", help="comma-separated strategies, in this row order"
    ),
    out: Path = typer.Option(None, "--out", "-o", help="also write the table to this file"),
    bold_best: bool = typer.Option(
        True, "--bold-best/--no-bold-best", help="bold each column's best value"
    ),
) -> None:
    """Lay metrics of several kgp lab eval reports out as one Markdown table: strategies down,
    runs across, each column named by the settings that differ between the runs (and by the
    metric when there are several). Multi-hop reports show recall at the run's cut (e.g. 512
    tokens), recall at 5 passages (the cut published figures use) and all-supporting-found."""
    from kg_platform_lab.evaluation.table import default_metrics, merge_metrics

    names = [s.strip() for s in strategies.split(",") if s.strip()] if strategies else None
    metrics = [m.strip() for m in metric.split(",") if m.strip()] if metric else None
    table = merge_metrics(reports, metrics or default_metrics(reports), strategies=names)
    text = table.markdown(bold_best=bold_best)
    typer.echo(f"{table.metric}:\n{text}")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
