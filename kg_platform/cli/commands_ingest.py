"""``kgp ingest`` (files and folders), ``kgp ingest-qa`` (QA jsonl) and ``kgp bench ingest``.

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

from kg_platform.config import get_settings


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("ingest-qa")(ingest_qa_cmd)
    from kg_platform.cli.bench import bench_app

    bench_app.command("ingest")(bench_ingest)
    bench_app.command("ingest-growth")(bench_ingest_growth)


def _json_progress(event: dict[str, Any]) -> None:
    if event.get("event") == "done":
        return  # the report is printed once at the end
    sys.stdout.write(json.dumps(event, default=str) + "\n")
    sys.stdout.flush()


class _Bar:
    """A rich progress bar fed by ingestion events (stderr, so stdout stays clean)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, \
            TimeElapsedColumn

        self.console = Console(stderr=True)
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[last]}"), console=self.console,
                                 transient=True)
        self.task: Any = None

    def __enter__(self) -> "_Bar":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "start":
            self.task = self.progress.add_task("ingesting", total=event.get("total") or None,
                                               last="")
        elif kind == "source" and self.task is not None:
            status = event.get("status")
            if status != "pruned":
                self.progress.advance(self.task)
            name = Path(str(event.get("uri", ""))).name
            self.progress.update(self.task, last=f"{status}: {name}"[:60])
            if status == "error":
                err = event.get("error") or {}
                self.console.print(f"[red]✗[/red] {event.get('uri')}: {err.get('error')}: "
                                   f"{err.get('reason')}")
        elif kind == "phase" and self.task is not None:
            self.progress.update(self.task, description=str(event.get("name")))


def _run(work: Callable[[Any], Any], as_json: bool) -> None:
    from kg_platform.graph import GraphClient

    settings = get_settings()
    with GraphClient.from_settings(settings) as graph:
        if as_json:
            report = work(graph, settings, _json_progress)
            sys.stdout.write(json.dumps({"event": "report", **report.model_dump()}) + "\n")
        else:
            with _Bar() as bar:
                report = work(graph, settings, bar)
            typer.echo(report.summary())
    raise typer.Exit(report.exit_code)


def ingest(
    paths: list[Path] = typer.Argument(..., help="files and/or folders to ingest"),
    corpus: str = typer.Option(None, "--corpus", "-c", help="corpus name (default: settings)"),
    include: list[str] = typer.Option(None, "--include", help="glob of files to take (repeatable)"),
    exclude: list[str] = typer.Option(None, "--exclude", help="glob of files to skip (repeatable)"),
    prune: bool = typer.Option(False, "--prune", help="delete sources whose files are gone"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of a progress bar"),
    distill: str = typer.Option(None, "--distill",
                                help="then distil with the LLM: comma-separated steps "
                                     "atomic,entities,tags (resumable; recorded in the run)"),
) -> None:
    """Ingest documents into a corpus (unchanged files are skipped; changed ones replaced)."""
    from kg_platform.ingest import ingest_paths

    from kg_platform.corpus_name import check_corpus

    name = check_corpus(corpus if corpus is not None else get_settings().corpus)

    def work(g: Any, s: Any, p: Any) -> Any:
        report = ingest_paths(g, s, paths, name, include=include or None,
                              exclude=exclude or None, prune=prune, progress=p)
        if distill:
            _distill_after(g, s, name, distill, report.run_id, as_json)
        return report

    _run(work, as_json)


def _distill_after(graph: Any, settings: Any, corpus: str, steps: str, run_id: str,
                   as_json: bool) -> None:
    """``--distill``: the distilled layer over the corpus's pending chunks, in the same run."""
    from kg_platform.distilling import distill_corpus, record_distillation
    from kg_platform.embedding import get_embedder
    from kg_platform.llm import get_llm

    llm = get_llm(settings)
    echo = (lambda m: sys.stderr.write(m + "\n")) if as_json else typer.echo
    from kg_platform.errors import JobLocked

    try:
        report = distill_corpus(graph, get_embedder(settings.embedding), llm, settings,
                                corpus=corpus, steps=steps, echo=echo)
    except JobLocked as exc:  # the ingest landed; the running distillation may miss new chunks
        echo(f"distillation skipped: {exc.args[0]}; run `kgp distill --corpus {corpus}` "
             "after it ends")
        return
    finally:
        if llm is not None:
            llm.close()
    if not report.skipped:
        record_distillation(graph, run_id, report)


def ingest_qa_cmd(
    file: Path = typer.Argument(..., help="a QA file in the bench/dev jsonl schema"),
    corpus: str = typer.Option(..., "--corpus", "-c", help="corpus name"),
    limit: int = typer.Option(None, "--limit", help="only the first N questions' paragraphs"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines instead of a progress bar"),
) -> None:
    """Ingest the candidate paragraphs of a QA file (one Source per distinct paragraph)."""
    from kg_platform.ingest.qa import ingest_qa

    _run(lambda g, s, p: ingest_qa(g, s, file, corpus, limit=limit, progress=p), as_json)


def bench_ingest(
    limit: int = typer.Option(20, "--limit", help="questions of the QA file whose paragraphs "
                              "are ingested"),
    qa_file: Path = typer.Option(None, "--qa-file", help="QA jsonl (default bench/dev/hotpotqa)"),
    documents: list[Path] = typer.Option(None, "--documents", help="also ingest these files"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Ingestion throughput end to end vs. the embedder alone on the same texts (the ceiling)."""
    from kg_platform.ingest.bench import run_ingest_bench

    result = run_ingest_bench(get_settings(), limit=limit, qa_file=qa_file,
                              documents=documents or None)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            typer.echo(f"{key:>28}: {value}")


def bench_ingest_growth(
    sizes: str = typer.Option("1000,10000", "--sizes", help="corpus sizes in pieces"),
    add: int = typer.Option(5, "--add", help="sources added, one run each, at every size"),
    qa_file: Path = typer.Option(None, "--qa-file", help="QA jsonl (default bench/dev/hotpotqa)"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Time per added source at growing corpus sizes, next to the embed-only time of its texts."""
    from kg_platform.ingest.bench_growth import run_growth_bench

    try:
        targets = [int(x) for x in sizes.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter("--sizes takes comma-separated piece counts, e.g. 1000,10000")
    result = run_growth_bench(get_settings(), sizes=targets, add=add, qa_file=qa_file)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(f"{'pieces':>8} {'full sync s':>11} {'per source s':>12} {'embed s':>8} "
               f"{'graph s':>8} {'x embed':>8} {'x smallest':>10}")
    for r in result["sizes"]:
        typer.echo(f"{r['pieces']:>8} {r['full_sync_s']:>11} {r['per_source_s']:>12} "
                   f"{r['embed_only_s']:>8} {r['piece_graph_s']:>8} {r['ratio_vs_embed']!s:>8} "
                   f"{r['ratio_vs_smallest']!s:>10}")
