"""``kgp lab ingest-qa``: the candidate paragraphs of a QA file as a corpus (one Source each)."""

from __future__ import annotations

from pathlib import Path

import typer

from kg_platform.cli.commands_ingest import run_ingest


def register(app: typer.Typer) -> None:
    app.command("ingest-qa")(ingest_qa_cmd)


def ingest_qa_cmd(
    file: Path = typer.Argument(..., help="a QA file in the bench/dev jsonl schema"),
    corpus: str = typer.Option(..., "--corpus", "-c", help="corpus name"),
    limit: int = typer.Option(None, "--limit", help="only the first N questions' paragraphs"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of a progress bar"),
) -> None:
    """Ingest the candidate paragraphs of a QA file (one Source per distinct paragraph)."""
    from kg_platform_lab.qa_ingest import ingest_qa

    run_ingest(
        lambda kp, p: ingest_qa(
            kp.graph, kp.settings, file, kp.open_corpus(corpus), limit=limit, progress=p
        ),
        as_json,
    )
