"""``kgp lab eval-parsing``: parse a folder of documents and score each against its reference
Markdown (see :mod:`kg_platform_lab.evaluation.parsing`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

DEFAULT_OUT = Path("out/parsing/eval-parsing.json")  # out/ is git-ignored


def register(app: typer.Typer) -> None:
    app.command("eval-parsing")(eval_parsing_command)


def eval_parsing_command(
    dataset: Path = typer.Option(
        ..., "--dataset", help="folder with <format>/<file> and <format>/groundtruth/<file>.md"
    ),
    formats: str = typer.Option(
        None, "--format", "-f", help="comma-separated formats to run (default: all)"
    ),
    out: Path = typer.Option(
        DEFAULT_OUT, "--out", "-o", help="per-document JSON report (default: out/parsing/)"
    ),
    worst: int = typer.Option(5, "--worst", help="list this many worst documents"),
) -> None:
    """Text recall/precision (bag of words), heading recall/precision (section titles), table
    cell F1 and rows kept whole, and reading order, per document (JSON) and per format
    (medians, printed)."""
    from kg_platform_lab.evaluation.parsing import evaluate

    wanted = [f.strip() for f in formats.split(",") if f.strip()] if formats else None
    report = evaluate(dataset, wanted)
    if not report.documents:
        raise typer.BadParameter(
            f"{dataset}: no document with a reference (<format>/groundtruth/<file>.md)",
            param_hint="--dataset",
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    typer.echo(report.markdown())
    pdf = report.medians().get("pdf", {}).get("seconds_per_page")
    if pdf is not None:
        typer.echo(f"\nPDF parsing: {pdf * 1000:.0f} ms per page")
    if worst:
        typer.echo("\nworst documents (lowest measure):")
        for doc, measure, value in report.worst(worst):
            note = f"  [{doc.error.split(':')[0]}]" if doc.error else ""
            typer.echo(f"  {doc.format}/{doc.file}: {measure} {value:.2f}{note}")
    typer.echo(f"\nper-document report: {out}")
