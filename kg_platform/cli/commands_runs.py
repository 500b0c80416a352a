"""``kgp runs list|show RUN_ID``: every ingestion run, ad-hoc (``kgp ingest``, the SDK) and job.

Both go through :class:`~kg_platform.sdk.platform.KnowledgePlatform` (``runs``, ``run``), which
first marks this host's runs whose process is gone as ``interrupted``; an unknown run id reaches
``kgp``'s error handler (message, hint, exit 2).
"""

from __future__ import annotations

import json

import typer

from kg_platform.cli.groups import group
from kg_platform.cli.lazy import knowledge_platform

RUNS_HELP = "Ingestion runs (ad-hoc and job): status, counts, errors and parser warnings."


def register(app: typer.Typer) -> None:
    sub = group(app, "runs", RUNS_HELP)
    sub.command("list")(list_runs)
    sub.command("show")(show_run)


def list_runs(
    corpus: str | None = typer.Option(None, "--corpus", "-c", help="only this corpus"),
    limit: int = typer.Option(20, "-n", "--limit", min=1, help="number of runs"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """The newest runs, newest first; dead runs of this host are marked interrupted first."""
    with knowledge_platform() as kp:
        runs = kp.runs(corpus, limit=limit)
    if as_json:
        typer.echo(json.dumps([r.model_dump() for r in runs], indent=2))
        return
    if not runs:
        typer.echo("no ingestion runs recorded" + (f" for corpus {corpus!r}" if corpus else ""))
        return
    for r in runs:
        c = r.counts
        dur = f"{r.duration_s:.1f}s" if r.duration_s is not None else "-"
        typer.echo(
            f"{(r.started or '')[:19]:<20} {r.corpus[:24]:<24} {r.status:<22} {dur:>8}  "
            f"+{c.get('added', 0)} ~{c.get('replaced', 0)} ={c.get('skipped', 0)} "
            f"!{c.get('failed', 0)} warn={len(r.warnings)}  {r.job or 'ad-hoc':<12} {r.id}"
        )


def show_run(
    run_id: str = typer.Argument(..., help="a run id (see `kgp runs list`)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """One run: status, paths, counts, every error and parser warning."""
    with knowledge_platform() as kp:
        run = kp.run(run_id)
    if as_json:
        typer.echo(json.dumps(run.model_dump(), indent=2))
        return
    typer.echo(run.summary())
