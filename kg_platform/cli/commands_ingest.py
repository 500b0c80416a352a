"""``kgp ingest`` (files and folders) and the piece-graph maintenance commands.

People get a rich progress bar and a summary; ``--json`` prints one JSON object per line (every
source's outcome, then the report) for jobs and log shippers. Exit code: 0 completed,
1 completed with errors (some inputs failed, the rest landed), 2 failed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from kg_platform.cli.lazy import get_settings, knowledge_platform


def register(app: typer.Typer) -> None:
    from kg_platform.cli.commands_references import register_references

    app.command("ingest")(ingest)
    register_piece_graph(app)
    register_references(app)


def _json_progress(event: dict[str, Any]) -> None:
    if event.get("event") == "done":
        return  # the report is printed once at the end
    sys.stdout.write(json.dumps(event, default=str) + "\n")
    sys.stdout.flush()


class _Bar:
    """A rich progress bar fed by ingestion events (stderr, so stdout stays clean)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[last]}"),
            console=self.console,
            transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> "_Bar":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            self.task = self.progress.add_task(
                "ingesting", total=event.get("total") or None, last=""
            )
        elif kind == "source" and self.task is not None:
            status = event.get("status")
            if status != "pruned":
                self.progress.advance(self.task)
            name = Path(str(event.get("uri", ""))).name
            self.progress.update(self.task, last=f"{status}: {name}"[:60])
            if status == "error":
                err = event.get("error") or {}
                self.console.print(
                    f"[red]✗[/red] {event.get('uri')}: {err.get('error')}: {err.get('reason')}"
                )
        elif kind == "warning":
            self.console.print(f"[yellow]![/yellow] {event.get('uri')}: {event.get('warning')}")
        elif kind == "phase" and self.task is not None:
            self.progress.update(self.task, description=str(event.get("name")))


def run_ingest(work: Callable[[Any, Any], Any], as_json: bool) -> None:
    """Call ``work(platform, progress)`` with JSON lines or a progress bar; exit with its code."""
    from kg_platform.cli.signals import Terminated, exit_terminated, sigterm_as_interrupt
    from kg_platform.sdk.platform import KnowledgePlatform

    try:
        with sigterm_as_interrupt(), KnowledgePlatform(get_settings()) as kp:
            if as_json:
                report = work(kp, _json_progress)
                sys.stdout.write(json.dumps({"event": "report", **report.model_dump()}) + "\n")
            else:
                with _Bar() as bar:
                    report = work(kp, bar)
                typer.echo(report.summary())
    except Terminated as exc:
        exit_terminated(
            exc,
            "the run is recorded as failed and what was written stays; "
            "run the same command again to resume",
        )
    raise typer.Exit(report.exit_code)


def ingest(
    paths: list[Path] = typer.Argument(..., help="files and/or folders to ingest"),
    corpus: str = typer.Option(None, "--corpus", "-c", help="corpus name (default: settings)"),
    include: list[str] = typer.Option(None, "--include", help="glob of files to take (repeatable)"),
    exclude: list[str] = typer.Option(None, "--exclude", help="glob of files to skip (repeatable)"),
    prune: bool = typer.Option(False, "--prune", help="delete sources whose files are gone"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of a progress bar"),
    distill: str = typer.Option(
        None,
        "--distill",
        help="then distil with the LLM: comma-separated steps "
        "atomic,entities,tags (resumable; recorded in the run)",
    ),
    engine: str = typer.Option(
        None,
        "--engine",
        help="local (this process) or ray (parse, plan and embed on Ray workers; writes stay "
        "here). Default: settings (KGP_INGEST__ENGINE, local)",
    ),
    address: str = typer.Option(
        None,
        "--address",
        help="--engine ray: the Ray cluster ('auto', 'ray://head:10001'); default starts Ray "
        "on this machine",
    ),
    workers: int = typer.Option(
        None, "--workers", min=1, help="--engine ray: worker actors (default: one per CPU)"
    ),
) -> None:
    """Ingest documents into a corpus (unchanged files are skipped; changed ones replaced)."""
    from kg_platform.corpus_name import check_corpus

    if engine is not None and engine not in ("local", "ray"):
        raise typer.BadParameter("use local or ray", param_hint="--engine")
    name = check_corpus(corpus if corpus is not None else get_settings().corpus)
    echo = (lambda m: sys.stderr.write(m + "\n")) if as_json else typer.echo
    run_ingest(
        lambda kp, p: kp.ingest(
            paths,
            name,
            include=include or None,
            exclude=exclude or None,
            prune=prune,
            progress=p,
            distill=distill or None,
            echo=echo,
            engine=engine,
            ray_address=address,
            ray_workers=workers,
        ),
        as_json,
    )


PIECE_GRAPH_HELP = "The MoGG piece graph (SIMILAR edges): rebuild it, check it."


def register_piece_graph(app: typer.Typer) -> None:
    from kg_platform.cli.groups import group

    sub = group(app, "piece-graph", PIECE_GRAPH_HELP)
    sub.command("rebuild")(piece_graph_rebuild)
    sub.command("check")(piece_graph_check)


def piece_graph_rebuild(
    corpus: str | None = typer.Option(None, "--corpus", help="default: settings.corpus"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Rebuild the whole piece graph with fresh BM25 statistics.

    Ingestion keeps the graph up to date incrementally (statistics frozen at the last full build)
    and rebuilds by itself once the corpus has grown or shrunk by piece_graph.rebuild_factor.
    """
    with knowledge_platform() as kp:
        done = kp.rebuild_piece_graph(corpus)
    if as_json:
        typer.echo(json.dumps(done.__dict__, default=str))
        return
    if done.stale:
        typer.echo("other ingests kept changing the corpus; it stays marked for the next sync")
        raise typer.Exit(1)
    typer.echo(
        f"rebuilt: {done.pieces} pieces, {done.edges} SIMILAR edges "
        f"(+{done.added} / -{done.removed} / {done.updated} re-weighted) in "
        f"{done.compute_s + done.write_s:.1f}s"
    )


def piece_graph_check(
    corpus: str | None = typer.Option(None, "--corpus", help="default: settings.corpus"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Compare the stored piece graph with a full build (exit 1 when they differ)."""
    with knowledge_platform() as kp:
        result = kp.check_piece_graph(corpus)
    if as_json:
        typer.echo(json.dumps(result))
    else:
        typer.echo(
            f"{result['corpus']}: {result['pieces']} pieces, {result['edges']} edges; against a "
            f"full build with the frozen statistics: {result['missing']} missing, "
            f"{result['extra']} extra, max score difference {result['max_score_diff']:.2e}; "
            f"overlap with a fresh-statistics rebuild {result['fresh_jaccard']}"
        )
    if result["missing"] or result["extra"]:
        raise typer.Exit(1)
