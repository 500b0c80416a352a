"""``kgp lab sample-docqa``: a fixed sample of a document-QA folder, by paper."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("sample-docqa")(sample_docqa_cmd)


def sample_docqa_cmd(
    source: Path = typer.Argument(..., exists=True, file_okay=False, help="document-QA folder"),
    out: Path = typer.Option(..., "--out", help="folder to write (replaced if it exists)"),
    papers: int = typer.Option(..., "--papers", min=1, help="papers to keep"),
) -> None:
    """Copy the first N papers by sha256 of their id, and their questions, into a new folder
    (the same N gives the same sample everywhere; a larger N contains a smaller one)."""
    from kg_platform_lab.evaluation.sample import sample_docqa

    report = sample_docqa(source, out, papers)
    typer.echo(
        json.dumps({"papers": report.papers, "questions": report.questions, "out": str(out)})
    )
